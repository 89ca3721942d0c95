/**
 * liveIndexColumn (db/record-indexes.ts) alone: which pages one live index
 * serves whatever the value (their statement keeps one plan), and which it
 * does not.
 */
import { describe, expect, it } from 'vitest'
import { loadRegistry } from '../../core/registry/load.js'
import { liveIndexColumn, recordIndexes } from '../../db/record-indexes.js'

const vehiculos = loadRegistry('modules.yaml').byName.get('vehiculos')!
const NEWEST: Array<Record<string, string>> = [{ _created: 'desc' }, { _id: 'desc' }]
const OLDEST: Array<Record<string, string>> = [{ _created: 'asc' }, { _id: 'asc' }]
const LIVE = { _deleted: null }

describe('liveIndexColumn', () => {
  it('names the field of one equality on live rows in the default order, either direction, flat or as $and', () => {
    expect(liveIndexColumn(vehiculos, { $and: [{ tipo: 'moto' }, LIVE] }, NEWEST)).toBe('tipo')
    expect(liveIndexColumn(vehiculos, { tipo: 'moto', _deleted: null }, OLDEST)).toBe('tipo')
    expect(liveIndexColumn(vehiculos, { $and: [LIVE, { km_actuales: 5 }] }, NEWEST)).toBe('km_actuales')
    expect(liveIndexColumn(vehiculos, { $and: [{ fecha_itv: '2026-01-02' }, LIVE] }, NEWEST)).toBe('fecha_itv')
    // It is a column with a live index.
    expect(recordIndexes(vehiculos).map((i) => i.name)).toContain('vehiculos_tipo_live_idx')
  })

  it('names none for any other page', () => {
    const cases: Array<[string, object, Array<Record<string, string>> | undefined]> = [
      ['two equalities', { $and: [{ tipo: 'moto' }, { estado: 'taller' }, LIVE] }, NEWEST],
      ['deleted rows too', { $and: [{ tipo: 'moto' }, { $or: [LIVE, { _deleted: { $ne: null } }] }] }, NEWEST],
      ['no live condition', { tipo: 'moto' }, NEWEST],
      ['a range', { $and: [{ km_actuales: { $gt: 5 } }, LIVE] }, NEWEST],
      ['a list of values', { $and: [{ tipo: { $in: ['moto', 'furgon'] } }, LIVE] }, NEWEST],
      ['null', { $and: [{ km_actuales: null }, LIVE] }, NEWEST],
      ['an or', { $or: [{ tipo: 'moto' }, LIVE] }, NEWEST],
      ['a unique field (its own index, over every row)', { $and: [{ matricula: 'M-1' }, LIVE] }, NEWEST],
      ['a system field', { $and: [{ _created_by: 'USR-2026-00001' }, LIVE] }, NEWEST],
      ['an unknown column', { $and: [{ nada: 'x' }, LIVE] }, NEWEST],
      ['another order', { $and: [{ tipo: 'moto' }, LIVE] }, [{ km_actuales: 'desc' }, { _id: 'desc' }]],
      ['mixed directions', { $and: [{ tipo: 'moto' }, LIVE] }, [{ _created: 'desc' }, { _id: 'asc' }]],
      ['no tie-break', { $and: [{ tipo: 'moto' }, LIVE] }, [{ _created: 'desc' }]],
      ['no order', { $and: [{ tipo: 'moto' }, LIVE] }, undefined],
    ]
    for (const [what, where, order] of cases) expect(liveIndexColumn(vehiculos, where, order), what).toBeUndefined()
  })
})

describe('recordIndexes', () => {
  it('gives each filterable, non-unique field a live index in the default order and a live count index of the value alone', () => {
    const byName = new Map(recordIndexes(vehiculos).map((i) => [i.name, i.expression]))
    expect(byName.get('vehiculos_tipo_live_idx')).toBe('create index "vehiculos_tipo_live_idx" on "vehiculos" ("tipo", "_created", "_id") where "_deleted" is null')
    expect(byName.get('vehiculos_tipo_count_idx')).toBe('create index "vehiculos_tipo_count_idx" on "vehiculos" ("tipo") where "_deleted" is null')
    // Every live index has its count index, and the other way round.
    const live = [...byName.keys()].filter((n) => n.endsWith('_live_idx')).map((n) => n.slice(0, -'_live_idx'.length))
    const count = [...byName.keys()].filter((n) => n.endsWith('_count_idx')).map((n) => n.slice(0, -'_count_idx'.length))
    expect(count).toEqual(live)
    expect(live.length).toBeGreaterThan(3)
    // A unique field keeps its unique constraint only.
    expect([...byName.keys()].filter((n) => n.startsWith('vehiculos_matricula_'))).toEqual([])
  })
})
