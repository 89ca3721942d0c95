/**
 * records/events/row-filter.ts: a list's filter over a stored row gives
 * what the database gives over the same row (db/where-sql.ts): null never
 * compares, date-times as instants, numbers stored as text, times with and
 * without seconds, `$ilike` patterns; a search condition in SQL is refused.
 */
import { describe, expect, it } from 'vitest'
import { NotOnStream, rowFilter } from '../../records/events/row-filter.js'
import { parseListQuery } from '../../records/list-query.js'
import { loadRegistry } from '../../core/registry/load.js'
import { createFieldCipher } from '../../core/crypto.js'

const row = {
  _id: '092-2026-00007',
  tipo_incidencia: 'urgente',
  categoria: null,
  importe: '12.50',
  hora: '08:30',
  _created: '2026-03-15T09:30:00.000Z',
  activo: true,
}
const match = (where: Record<string, unknown>): boolean => rowFilter(where)(row)

describe('rowFilter', () => {
  it('equality, in, not in and not equal, with SQL null semantics', () => {
    expect(match({ tipo_incidencia: 'urgente' })).toBe(true)
    expect(match({ tipo_incidencia: 'normal' })).toBe(false)
    expect(match({ tipo_incidencia: { $in: ['normal', 'urgente'] } })).toBe(true)
    expect(match({ tipo_incidencia: { $nin: ['urgente'] } })).toBe(false)
    expect(match({ categoria: { $nin: ['x'] } })).toBe(false)
    expect(match({ categoria: { $ne: 'x' } })).toBe(false)
    expect(match({ categoria: null })).toBe(true)
    expect(match({ categoria: { $ne: null } })).toBe(false)
    expect(match({ categoria: { $gt: '' } })).toBe(false)
    expect(match({ activo: true })).toBe(true)
    expect(match({ $or: [{ categoria: { $ne: 'x' } }, { categoria: null }] })).toBe(true)
    expect(match({ $and: [{ activo: true }, { tipo_incidencia: 'normal' }] })).toBe(false)
    expect(match({ ausente: null })).toBe(true)
  })

  it('ranges over instants, numbers stored as text and times', () => {
    expect(match({ _created: { $gte: new Date('2026-03-15T09:30:00Z') } })).toBe(true)
    expect(match({ _created: { $gt: new Date('2026-03-15T09:30:00Z') } })).toBe(false)
    expect(match({ _created: { $lt: new Date('2026-03-16T00:00:00Z'), $gte: new Date('2026-03-01T00:00:00Z') } })).toBe(true)
    expect(match({ importe: 12.5 })).toBe(true)
    expect(match({ importe: { $lte: 12 } })).toBe(false)
    expect(match({ hora: '08:30:00' })).toBe(true)
    expect(match({ hora: { $lt: '09:00' } })).toBe(true)
    expect(match({ categoria: { $lt: 'z' } })).toBe(false)
  })

  it('$ilike: a case-insensitive pattern with escapes', () => {
    expect(match({ _id: { $ilike: '%2026-0000%' } })).toBe(true)
    expect(match({ _id: { $ilike: '092-2026-0000_' } })).toBe(true)
    expect(match({ _id: { $ilike: '%\\%%' } })).toBe(false)
    expect(match({ tipo_incidencia: { $ilike: '%URG%' } })).toBe(true)
    expect(match({ categoria: { $ilike: '%' } })).toBe(false)
  })

  it('agrees with the list parser: a parsed filter evaluates, a search condition in SQL is refused', () => {
    const registry = loadRegistry('modules.yaml')
    const mod = registry.byName.get('sala092')!
    const cipher = createFieldCipher([Buffer.alloc(32, 7)], { indexKey: Buffer.alloc(32, 8), integrityKey: Buffer.alloc(32, 9) })
    const parsed = (q: Record<string, string>): Record<string, unknown> => parseListQuery(mod, { ...q, incluir_eliminados: 'true' }, 'Europe/Madrid', cipher).where
    const stored = { _id: '092-2026-00001', tipo_incidencia: 'urgente', estado: 'pendiente', fecha_hora_entrada: '2026-03-15T09:30:00.000Z', _deleted: '2026-03-16T00:00:00.000Z' }
    expect(rowFilter(parsed({ tipo_incidencia: 'urgente', 'fecha_hora_entrada[gte]': '2026-03-15 10:30:00' }))(stored)).toBe(true)
    expect(rowFilter(parsed({ 'fecha_hora_entrada[gt]': '2026-03-15 10:30:00' }))(stored)).toBe(false)
    expect(rowFilter(parsed({ 'estado[ne]': 'resuelta', 'tipo_incidencia[in]': 'normal,urgente' }))(stored)).toBe(true)
    expect(() => rowFilter({ $sql: { sql: 'true', params: [] } })).toThrow(NotOnStream)
  })
})
