/**
 * The records layer's reads without the query builder (db/row-query.ts,
 * db/where-sql.ts) and the named prepared statements they and MikroORM's
 * own queries run as (db/driver.ts, db/prepared-statements.ts), both
 * storage modes:
 * - for any filter of the vocabulary, order, limit and offset, the direct
 *   read returns the same rows and total as MikroORM's query builder,
 *   with or without search conditions and their relevance order, and
 *   for a page read by the keys of one live index (property test over a
 *   seeded table);
 * - a GET by id, a list's total and a page one live index serves run as
 *   named statements; a search and other ordered pages do not;
 * - a column whose type changed under the prepared statements (another
 *   instance widened it) does not break the reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import type { Api } from '../helpers/http.js'
import { usingPostgres } from '../helpers/services.js'
import { startTestApp } from '../helpers/test-app.js'
import { findRowsAndCount } from '../../db/row-query.js'
import { liveIndexColumn } from '../../db/record-indexes.js'
import type { Row } from '../../db/module-entity.js'
import { containsCondition, documentColumn, matchCondition, rankExpression, type SqlCondition } from '../../db/search-sql.js'

let h: Harness, app: FastifyInstance, admin: Api
const ENTITY = 'mod_vehiculos'

beforeAll(async () => {
  ({ h, app, admin } = await startTestApp())
  // 120 rows: every 5th deleted, some values missing, creation times one minute apart.
  await h.db.query(`
    insert into vehiculos ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash", "_deleted",
                           matricula, tipo, km_actuales, fecha_itv, estado)
    select 'VEH-1990-' || lpad(i::text, 5, '0'), timestamptz '2026-01-01 00:00:00+00' + i * interval '1 minute',
           'USR-1990-0000' || (i % 3), now(), 'USR-1990-00001', 1, repeat('0', 64),
           case when i % 5 = 0 then timestamptz '2026-02-01 00:00:00+00' end,
           'M-' || i, (array['patrulla', 'moto', 'furgon', 'todoterreno'])[1 + i % 4],
           case when i % 7 = 0 then null else (i * 37) % 1000 end,
           case when i % 6 = 0 then null else date '2026-01-01' + (i % 50) end,
           (array['operativo', 'taller', 'baja'])[1 + i % 3]
    from generate_series(1, 120) as i`)
}, 120_000)
afterAll(async () => { await h.close() })

const at = (minute: number): Date => new Date(Date.UTC(2026, 0, 1, 0, minute))

/** Filters as the records layer writes them (records/list-query.ts, records/scope.ts). */
const condition: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.constantFrom('patrulla', 'moto', 'furgon', 'todoterreno', 'nada').map((v) => ({ tipo: v })),
  fc.uniqueArray(fc.constantFrom('patrulla', 'moto', 'furgon'), { minLength: 1 }).map((v) => ({ tipo: { $in: v } })),
  fc.constantFrom('operativo', 'taller').map((v) => ({ $or: [{ estado: { $ne: v } }, { estado: null }] })),
  fc.uniqueArray(fc.constantFrom('operativo', 'taller', 'baja'), { minLength: 1 }).map((v) => ({ $or: [{ estado: { $nin: v } }, { estado: null }] })),
  fc.tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), fc.integer({ min: 0, max: 1000 })).map(([op, n]) => ({ km_actuales: { [op]: n } })),
  fc.tuple(fc.constantFrom('$gt', '$lte'), fc.integer({ min: 0, max: 50 })).map(([op, d]) => ({ fecha_itv: { [op]: `2026-01-${String(1 + (d % 28)).padStart(2, '0')}` } })),
  fc.tuple(fc.constantFrom('$gte', '$lt'), fc.integer({ min: 0, max: 130 })).map(([op, m]) => ({ _created: { [op]: at(m) } })),
  fc.constantFrom(null, { $ne: null }).map((v) => ({ km_actuales: v })),
  fc.constantFrom('USR-1990-00000', 'USR-1990-00001').map((v) => ({ $or: [{ _created_by: v }, { _id: 'VEH-1990-00003' }] })),
)
const filter = fc.tuple(fc.array(condition, { maxLength: 3 }), fc.constantFrom<unknown>({ _deleted: null }, { $or: [{ _deleted: null }, { _deleted: { $ne: null } }] }, undefined))
  .map(([cs, deleted]) => {
    const all = deleted === undefined ? cs : [...cs, deleted as Record<string, unknown>]
    return all.length === 0 ? {} : all.length === 1 ? all[0]! : { $and: all }
  })
const order = fc.tuple(fc.constantFrom('_created', 'km_actuales', 'tipo', 'fecha_itv'), fc.constantFrom<'asc' | 'desc'>('asc', 'desc'))
  .map(([column, dir]): Array<Record<string, 'asc' | 'desc'>> => [{ [column]: dir }, { _id: dir }])

/** Pages one live index serves alone (db/record-indexes.ts): live rows, one equality on an indexed field, the default order. */
const keyedPage = fc.tuple(
  fc.oneof(
    fc.constantFrom('patrulla', 'moto', 'nada').map((v) => ({ tipo: v })),
    fc.constantFrom('operativo', 'taller').map((v) => ({ estado: v })),
    fc.integer({ min: 0, max: 1000 }).map((n) => ({ km_actuales: (n * 37) % 1000 })),
  ),
  fc.boolean(),
  fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
).map(([eq, flat, dir]) => ({
  where: flat ? { ...eq, _deleted: null } : { $and: [eq, { _deleted: null }] },
  orderBy: [{ _created: dir }, { _id: dir }] as Array<Record<string, 'asc' | 'desc'>>,
}))
const page = fc.oneof(fc.tuple(filter, order).map(([where, orderBy]) => ({ where, orderBy })), keyedPage)

/** Search conditions as records/search-query.ts makes them: `contiene`, and `q` with or without its relevance order. */
const searchOf = (): fc.Arbitrary<{ search: readonly SqlCondition[], rank?: SqlCondition }> => {
  const mod = app.registry.byName.get('vehiculos')!
  const contains = fc.constantFrom('%1%', '%2_%', '%m-3%', '%\\%%').map((p) => containsCondition('matricula', p))
  const words = fc.constantFrom('patrulla', 'moto taller', 'm-12', 'nada')
  return fc.oneof(
    fc.constant({ search: [] }),
    fc.array(contains, { minLength: 1, maxLength: 2 }).map((search) => ({ search })),
    fc.tuple(words, fc.boolean(), fc.option(contains, { nil: undefined })).map(([w, ranked, c]) => ({
      search: [matchCondition(mod, w)!, ...(c === undefined ? [] : [c])],
      ...(ranked && { rank: rankExpression(mod, w)! }),
    })),
  )
}

describe('direct reads', () => {
  it('return the rows and the total the query builder returns, for any filter of the vocabulary', async () => {
    const em = app.orm.em.fork()
    const mod = app.registry.byName.get('vehiculos')!
    let direct = 0
    let keyed = 0
    const knex = em.getConnection().getKnex()
    const onQuery = (q: { sql: string }): void => {
      if (q.sql.startsWith('select count(*)::int as n from "vehiculos"')) direct++
      if (q.sql.includes(' "_page" on ')) keyed++
    }
    knex.on('query', onQuery)
    try {
      await fc.assert(fc.asyncProperty(page, fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 40 }), searchOf(), async ({ where, orderBy }, limit, offset, search) => {
        const onLiveIndex = liveIndexColumn(mod, where, orderBy) !== undefined
        const viaSql = await findRowsAndCount(em, ENTITY, where, { orderBy, limit, offset, ...search, onLiveIndex })
        // Functions make findRowsAndCount use the query builder (as it does for a filter outside the vocabulary).
        const viaBuilder = await findRowsAndCount(em, ENTITY, () => where, { orderBy: () => orderBy, limit, offset, ...search })
        const ids = (rows: Row[]): unknown[] => rows.map((r) => r._id)
        expect(ids(viaSql[0])).toEqual(ids(viaBuilder[0]))
        expect(viaSql[0]).toEqual(viaBuilder[0]) // every column, mapped alike (dates, numbers)
        expect(viaSql[1]).toBe(viaBuilder[1])
      }), { numRuns: 150 })
    } finally {
      knex.off('query', onQuery)
    }
    expect(direct).toBe(150) // every direct count ran (not the query builder's)
    expect(keyed).toBeGreaterThan(10) // and pages read by the keys of one live index among them
  })
})

/** The SQL statements one request ran, with their statement names. */
async function statementsOf (request: () => Promise<unknown>): Promise<Array<{ sql: string, name?: string }>> {
  const seen: Array<{ sql: string, name?: string }> = []
  const knex = app.orm.em.getConnection().getKnex()
  const onQuery = (q: { sql: string, name?: string }): void => { if (/from "vehiculos"/.test(q.sql)) seen.push({ sql: q.sql, ...(q.name !== undefined && { name: q.name }) }) }
  knex.on('query', onQuery)
  try {
    await request()
  } finally {
    knex.off('query', onQuery)
  }
  return seen
}

describe('named prepared statements', () => {
  it('a GET by id, the total of a list and a page one live index serves run as named statements (PostgreSQL); other pages and a search are planned for their values every time', async () => {
    const get = await statementsOf(async () => { expect((await admin.get('/vehiculos/VEH-1990-00001')).status).toBe(200) })
    expect(get).toHaveLength(1)
    if (usingPostgres) expect(get[0]!.name).toMatch(/^s\d+_[0-9a-f]{24}$/)
    else expect(get[0]!.name).toBeUndefined()
    // A parameter on PostgreSQL; PGlite's socket server takes one message at a time, so values stay inlined there.
    if (usingPostgres) expect(get[0]!.sql).not.toContain('VEH-1990-00001')
    else expect(get[0]!.sql).toContain("'VEH-1990-00001'")
    const named = (list: Array<{ sql: string, name?: string }>, count: boolean): boolean => list.find((q) => /count\(/.test(q.sql) === count)!.name !== undefined
    // One equality on an indexed field, the default order: the page is read by the keys of that field's live index,
    // one plan for every value (db/record-indexes.ts), and the total keeps one plan.
    const keyed = await statementsOf(async () => { expect((await admin.get('/vehiculos?tipo=moto&limit=5&offset=5')).status).toBe(200) })
    expect(keyed).toHaveLength(2)
    expect({ page: named(keyed, false), total: named(keyed, true) }).toEqual({ page: usingPostgres, total: usingPostgres })
    // Two filters: which index serves the page best depends on the values, so it is planned for them every time.
    const list = await statementsOf(async () => { expect((await admin.get('/vehiculos?tipo=moto&estado=taller&limit=5')).status).toBe(200) })
    expect(list).toHaveLength(2)
    expect({ page: named(list, false), total: named(list, true) }).toEqual({ page: false, total: usingPostgres })
    const search = await statementsOf(async () => { expect((await admin.get('/vehiculos?matricula[contiene]=M-1')).status).toBe(200) })
    expect(search).toHaveLength(2)
    expect(search.map((q) => q.name)).toEqual([undefined, undefined])
  })

  it('a statement already run on a connection is not described again (db/known-shape-query.ts)', async () => {
    // Which pooled connection a request gets is the pool's choice: count Describes per connection and statement.
    const proto = pg.Connection.prototype as unknown as Record<'bind' | 'describe', (...args: unknown[]) => void>
    const original = { bind: proto.bind, describe: proto.describe }
    const lastBound = new WeakMap<object, string>()
    const described = new Map<object, Map<string, number>>()
    proto.bind = function (this: object, ...args: unknown[]) {
      lastBound.set(this, String((args[0] as { statement?: string }).statement ?? ''))
      original.bind.apply(this, args)
    }
    proto.describe = function (this: object, ...args: unknown[]) {
      const perStatement = described.get(this) ?? new Map<string, number>()
      described.set(this, perStatement)
      const statement = lastBound.get(this) ?? ''
      perStatement.set(statement, (perStatement.get(statement) ?? 0) + 1)
      original.describe.apply(this, args)
    }
    try {
      for (let i = 0; i < 30; i++) {
        const res = await admin.get(`/vehiculos/VEH-1990-0000${1 + (i % 9)}`)
        expect(res.status).toBe((1 + (i % 9)) % 5 === 0 ? 404 : 200)
      }
    } finally {
      Object.assign(proto, original)
    }
    const counts = [...described.values()].flatMap((m) => [...m.values()])
    // PostgreSQL: at most one Describe per connection for the GET's statement, then Bind, Execute and Sync only
    // (30 GETs on at most 10 connections); embedded mode sends its values inlined, never described.
    expect(counts.every((n) => n === 1), JSON.stringify(counts)).toBe(true)
    expect(counts.length).toBeLessThanOrEqual(usingPostgres ? 10 : 0)
  })

  it('a column whose type changed under the statements (widened by another instance) does not break the reads', async () => {
    // Prepare the GET on every pooled connection it may use.
    for (let i = 0; i < 12; i++) expect((await admin.get('/vehiculos/VEH-1990-00002')).status).toBe(200)
    // As a start with a longer max_length does it (db/search-document-plan.ts): the search document around the change.
    const doc = documentColumn(app.registry.byName.get('vehiculos')!)!
    await h.db.query(`alter table vehiculos drop column "${doc.name}"; alter table vehiculos alter column matricula type varchar(40); ` +
      `alter table vehiculos add column "${doc.name}" tsvector generated always as (${doc.expression}) stored`)
    for (let i = 0; i < 12; i++) {
      const res = await admin.get('/vehiculos/VEH-1990-00002')
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.matricula).toBe('M-2')
    }
  })
})
