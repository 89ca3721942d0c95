/** storedName (db/identifier.ts) alone: short names kept, long ones shortened, distinct and stable. */
import { describe, expect, it } from 'vitest'
import { storedName } from '../../db/identifier.js'

describe('storedName', () => {
  it('keeps a name of up to 63 bytes as it is', () => {
    expect(storedName('vehiculos_tipo_live_idx')).toBe('vehiculos_tipo_live_idx')
    const exact = 'a'.repeat(63)
    expect(storedName(exact)).toBe(exact)
  })

  it('shortens a longer one to 63 bytes, keeping its beginning; names that share their first 63 bytes stay apart', () => {
    const table = 'inventario_de_material_incautado_en_diligencias'
    const live = storedName(`${table}_descripcion_del_objeto_intervenido_live_idx`)
    const count = storedName(`${table}_descripcion_del_objeto_intervenido_count_idx`)
    for (const name of [live, count]) {
      expect(Buffer.byteLength(name)).toBe(63)
      expect(name.startsWith(`${table}_desc`)).toBe(true)
      expect(name).toMatch(/_[0-9a-f]{10}$/)
    }
    expect(live).not.toBe(count)
    expect(storedName(`${table}_descripcion_del_objeto_intervenido_live_idx`)).toBe(live)
  })

  it('never cuts a character in two', () => {
    const name = storedName(`${'ñ'.repeat(40)}_live_idx`)
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63)
    expect(name).not.toContain('\uFFFD')
    expect(name.startsWith('ñ'.repeat(26))).toBe(true)
  })
})
