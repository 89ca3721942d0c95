/**
 * liveIndexColumn (db/record-indexes.ts) alone: which pages one live index
 * serves whatever the value (their statement keeps one plan), and which it
 * does not.
 */
import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { loadRegistry, parseRegistry } from '../../core/registry/load.js'
import { liveIndexColumn, recordIndexes } from '../../db/record-indexes.js'
import { documentColumn, searchIndexes } from '../../db/search-sql.js'

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
  it('gives each indexed, non-unique field a live index in the default order and a live count index of the value alone', () => {
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

  it('indexes what modules.yaml declares and what a role implies, and nothing else (docs/administrator-guide.md "Indexes")', () => {
    const live = recordIndexes(vehiculos).map((i) => i.name).filter((n) => n.endsWith('_live_idx')).map((n) => n.slice('vehiculos_'.length, -'_live_idx'.length))
    // km_actuales declared; tipo an enum; estado the state field; asignado_a an owner and a ref; the dates by their type.
    expect(live.sort()).toEqual(['asignado_a', 'estado', 'fecha_itv', 'fecha_matriculacion', 'km_actuales', 'tipo'])
    // marca and modelo stay filterable, unindexed.
    expect(vehiculos.fieldMap.get('marca')).toMatchObject({ filterable: true, indexed: false })
  })
})

describe('the benchmark module (test/bench/modules.bench.yaml.tail)', () => {
  it('has the ceiling\'s indexes: category and status (and the list\'s own order and deleted rows), no search', () => {
    const records = parseRegistry(readFileSync('modules.yaml', 'utf8') + readFileSync('test/bench/modules.bench.yaml.tail', 'utf8'), 'bench.yaml').byName.get('records')!
    expect(recordIndexes(records).map((i) => i.name)).toEqual([
      'records_status_live_idx', 'records_status_count_idx', 'records_category_live_idx', 'records_category_count_idx',
      'records_created_id_idx', 'records_deleted_idx',
    ])
    expect(searchIndexes(records)).toEqual([])
    expect(documentColumn(records)).toBeUndefined()
    // Nor an index of its own on _created_by, _modified or _modified_by.
    expect(records.indexedSystemFields).toEqual([])
  })
})
