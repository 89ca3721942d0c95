/**
 * The records layer's one query path (db/row-query.ts, db/where-sql.ts)
 * and the named prepared statements it and MikroORM's own queries run as
 * (db/driver.ts, db/prepared-statements.ts), both storage modes:
 * - for any filter of the vocabulary, order, limit and offset, a page and
 *   its total are exactly the rows the filter means, in the order asked,
 *   every column mapped as MikroORM maps it, with or without search
 *   conditions and their relevance order, and for a page read by the keys
 *   of one live index (property test over a seeded table, against a
 *   reading of the filter in the test itself);
 * - the SQL sent for a read by id, a page and its total, and a count is
 *   the one expected; a filter outside the vocabulary is a TypeError and
 *   sends nothing;
 * - a GET by id, a list's total and a page one live index serves run as
 *   named statements; a search and other ordered pages do not;
 * - a column whose type changed under the prepared statements (another
 *   instance widened it) does not break the reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import type { Api } from '../helpers/http.js'
import { usingPostgres } from '../helpers/services.js'
import { queriesOf, type SentQuery } from '../helpers/sql-capture.js'
import { startTestApp } from '../helpers/test-app.js'
import { countRows, findRow, findRowsAndCount } from '../../db/row-query.js'
import { liveIndexColumn } from '../../db/record-indexes.js'
import type { Row } from '../../db/module-entity.js'
import { containsCondition, documentColumn, matchCondition, rankExpression, type SqlCondition } from '../../db/search-sql.js'
import { numberPlaceholders } from '../../db/placeholders.js'
import type { Where } from '../../db/where-sql.js'

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
  // `contiene` on an id (a pattern), and on an enum that no declared value contains (an empty list).
  fc.constantFrom('%veh-1990-0001%', '%1990-0002_%', '%\\%%', '%nada%').map((p) => ({ _id: { $ilike: p } })),
  fc.constantFrom({ tipo: { $in: [] } }, { estado: { $nin: [] } }),
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

/** The filter as the test reads it: the vocabulary's meaning in SQL (a comparison with null is never true). */
function matches (row: Row, where: Where): boolean {
  return Object.entries(where).every(([key, v]) => {
    if (key === '$and') return (v as Where[]).every((w) => matches(row, w))
    if (key === '$or') return (v as Where[]).some((w) => matches(row, w))
    return holds(row[key], v)
  })
}
const comparable = (v: unknown): unknown => v instanceof Date ? v.getTime() : v
/** `a` before (< 0), with (0) or after (> 0) `b`; both not null. */
const compare = (a: unknown, b: unknown): number => {
  const [x, y] = [comparable(a), comparable(b)] as [string | number, string | number]
  return x < y ? -1 : x > y ? 1 : 0
}
function holds (value: unknown, v: unknown): boolean {
  if (v === null) return value === null
  if (typeof v !== 'object' || v instanceof Date) return value !== null && compare(value, v) === 0
  return Object.entries(v as Record<string, unknown>).every(([op, x]) => {
    if (op === '$ne' && x === null) return value !== null
    if (op === '$nin' && (x as unknown[]).length === 0) return true // not in nothing: every row, null or not
    if (value === null) return false
    switch (op) {
      case '$ne': return compare(value, x) !== 0
      case '$in': return (x as unknown[]).some((y) => compare(value, y) === 0)
      case '$nin': return (x as unknown[]).every((y) => compare(value, y) !== 0)
      case '$gt': return compare(value, x) > 0
      case '$gte': return compare(value, x) >= 0
      case '$lt': return compare(value, x) < 0
      case '$lte': return compare(value, x) <= 0
      case '$ilike': return likePattern(x as string).test(value as string)
      default: throw new Error(`the test does not read ${op}`)
    }
  })
}
/** A LIKE pattern (`%`, `_`, `\` escapes) as a case-insensitive regular expression. */
function likePattern (pattern: string): RegExp {
  const parts = pattern.match(/\\.|%|_|[^\\%_]+/g) ?? []
  const body = parts.map((p) => p === '%' ? '.*' : p === '_' ? '.' : (p.startsWith('\\') ? p.slice(1) : p).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('')
  return new RegExp(`^${body}$`, 'is')
}
/** PostgreSQL's order: nulls last ascending, first descending. */
function inOrder (orderBy: Array<Record<string, 'asc' | 'desc'>>, relevance?: Map<unknown, number>) {
  return (a: Row, b: Row): number => {
    if (relevance !== undefined) {
      const r = relevance.get(b._id)! - relevance.get(a._id)!
      if (r !== 0) return r
    }
    for (const o of orderBy) {
      const [column, dir] = Object.entries(o)[0]!
      const [x, y] = [a[column], b[column]]
      const c = x === null && y === null ? 0 : x === null ? 1 : y === null ? -1 : compare(x, y)
      if (c !== 0) return dir === 'asc' ? c : -c
    }
    return 0
  }
}

describe('reads of the vocabulary', () => {
  it('a page and its total are exactly the rows the filter means, in the order asked, for any filter, order and search', async () => {
    const em = app.orm.em.fork()
    const mod = app.registry.byName.get('vehiculos')!
    // Every row as MikroORM maps it (instants as Dates, dates as text, numbers): what each read must return.
    const table = (await em.find(ENTITY, {}, { disableIdentityMap: true })).map((r) => ({ ...(r as Row) }))
    expect(table).toHaveLength(120)
    /** The ids a search condition matches, and each row's relevance, as PostgreSQL computes them. */
    const sqlOf = (c: SqlCondition): { sql: string, params: unknown[] } => ({ sql: numberPlaceholders(c.sql).text, params: [...c.params] })
    const idsWhere = async (c: SqlCondition): Promise<Set<unknown>> => {
      const { sql, params } = sqlOf(c)
      return new Set((await h.db.query<{ _id: string }>(`select "_id" from vehiculos where ${sql}`, params)).map((r) => r._id))
    }
    const relevanceOf = async (c: SqlCondition): Promise<Map<unknown, number>> => {
      const { sql, params } = sqlOf(c)
      return new Map((await h.db.query<{ _id: string, r: number }>(`select "_id", ${sql} as r from vehiculos`, params)).map((r) => [r._id, r.r]))
    }
    let keyed = 0
    let some = 0
    const knex = em.getConnection().getKnex()
    const onQuery = (q: { sql: string }): void => { if (q.sql.includes(' "_page" on ')) keyed++ }
    knex.on('query', onQuery)
    try {
      await fc.assert(fc.asyncProperty(page, fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 40 }), searchOf(), async ({ where, orderBy }, limit, offset, search) => {
        const onLiveIndex = liveIndexColumn(mod, where, orderBy) !== undefined
        const [rows, total] = await findRowsAndCount(em, ENTITY, where, { orderBy, limit, offset, ...search, onLiveIndex })
        const found = await Promise.all(search.search.map(idsWhere))
        const relevance = search.rank === undefined ? undefined : await relevanceOf(search.rank)
        const expected = table.filter((r) => matches(r, where) && found.every((ids) => ids.has(r._id))).sort(inOrder(orderBy, relevance))
        expect(total).toBe(expected.length)
        expect(rows.map((r) => r._id)).toEqual(expected.slice(offset, offset + limit).map((r) => r._id))
        expect(rows).toEqual(expected.slice(offset, offset + limit)) // every column, mapped alike (dates, numbers)
        if (rows.length > 0) some++
      }), { numRuns: 150 })
    } finally {
      knex.off('query', onQuery)
    }
    expect(some).toBeGreaterThan(10) // runs that read rows, not only empty pages
    expect(keyed).toBeGreaterThan(10) // and pages read by the keys of one live index among them
  })
})

/** The SQL statements `run` sent: text, values (embedded mode inlines those of an unnamed statement, db/driver.ts) and statement name. */
const sentBy = (run: () => Promise<unknown>): Promise<SentQuery[]> => queriesOf(app.orm.em, run)
/** The SQL one read sent: its text and values. */
const sent = async (read: () => Promise<unknown>): Promise<Array<{ sql: string, bindings: unknown[] }>> => (await sentBy(read)).map(({ sql, bindings }) => ({ sql, bindings }))
/** What the driver sends for `text` with `values`: parameters, but the values inlined for an unnamed statement in embedded mode. */
function asSent (text: string, values: unknown[], named = true): { sql: string, bindings: unknown[] } {
  if (usingPostgres || named) return { sql: text, bindings: values }
  return { sql: text.replace(/\$(\d+)/g, (_, i: string) => { const v = values[Number(i) - 1]; return typeof v === 'number' ? String(v) : `'${String(v)}'` }), bindings: [] }
}

describe('the SQL of a read', () => {
  it('a read by id, a page and its total, and a count send the SQL the filter means; a filter outside the vocabulary sends nothing', async () => {
    const em = app.orm.em.fork()
    const byId = await sent(async () => { expect((await findRow(em, ENTITY, { _id: 'VEH-1990-00001', _deleted: null }))?._id).toBe('VEH-1990-00001') })
    expect(byId).toHaveLength(1)
    const { sql, bindings } = asSent('"_id" = $1 and "_deleted" is null limit 1', ['VEH-1990-00001'])
    expect(byId[0]!.sql).toMatch(/^select "_id", .* from "vehiculos" where /)
    expect(byId[0]!.sql).not.toContain('search') // the stored search document is never read
    expect({ sql: byId[0]!.sql.slice(byId[0]!.sql.indexOf(' where ') + 7), bindings: byId[0]!.bindings }).toEqual({ sql, bindings })

    const where = { $and: [{ tipo: { $in: ['moto', 'furgon'] } }, { $or: [{ km_actuales: { $gte: 100 } }, { km_actuales: null }] }, { _deleted: null }] }
    let result: [Row[], number] = [[], 0]
    const listed = await sent(async () => { result = await findRowsAndCount(em, ENTITY, where, { orderBy: [{ km_actuales: 'desc' }, { _id: 'desc' }], limit: 5, offset: 10 }) })
    const cond = '("tipo" in ($1, $2)) and (("km_actuales" >= $3) or ("km_actuales" is null)) and ("_deleted" is null)'
    const count = listed.find((q) => q.sql.startsWith('select count('))!
    expect(count).toEqual(asSent(`select count(*)::int as n from "vehiculos" where ${cond}`, ['moto', 'furgon', 100]))
    const pageSql = listed.find((q) => !q.sql.startsWith('select count('))!
    const tail = asSent(`${cond} order by "km_actuales" desc, "_id" desc limit 5 offset $4`, ['moto', 'furgon', 100, 10], false)
    expect({ sql: pageSql.sql.slice(pageSql.sql.indexOf(' where ') + 7), bindings: pageSql.bindings }).toEqual(tail)
    const [truth] = await h.db.query<{ n: number }>(`select count(*)::int as n from vehiculos where tipo in ('moto', 'furgon') and (km_actuales >= 100 or km_actuales is null) and "_deleted" is null`)
    expect(result[1]).toBe(truth!.n)
    expect(result[0]).toHaveLength(Math.min(5, Math.max(0, truth!.n - 10)))

    let n = -1
    const counted = await sent(async () => { n = await countRows(em, ENTITY, { _id: 'VEH-1990-00002', _deleted: null }) })
    expect(counted).toEqual([asSent('select count(*)::int as n from "vehiculos" where "_id" = $1 and "_deleted" is null', ['VEH-1990-00002'])])
    expect(n).toBe(1)
    expect(await countRows(em, ENTITY, { _id: 'VEH-1990-00005', _deleted: null })).toBe(0) // every 5th row is deleted
    expect(await countRows(em, ENTITY, { _id: { $ne: 'VEH-1990-00001' }, tipo: 'moto' })).toBe(seeded((i) => i % 4 === 1 && i !== 1))

    for (const outside of [{ tipo: { $like: 'mo%' } }, { tipo: { moto: true } }, { tipo: { $in: [{}] } }, { '[raw]: true': [] }]) {
      const none = await sent(async () => {
        await expect(findRow(em, ENTITY, outside)).rejects.toThrow(TypeError)
        await expect(countRows(em, ENTITY, outside)).rejects.toThrow(TypeError)
        await expect(findRowsAndCount(em, ENTITY, outside, { orderBy: [{ _id: 'asc' }], limit: 1 })).rejects.toThrow(TypeError)
      })
      expect(none, JSON.stringify(outside)).toEqual([])
    }
    await expect(findRowsAndCount(em, ENTITY, {}, { orderBy: [{ '[raw]: random()': 'asc' }] as never, limit: 1 })).rejects.toThrow(TypeError)
  })
})

describe('an array value', () => {
  it('is a jsonb column equal to that array (the uniqueness check of an array field), in any key order', async () => {
    await h.db.query(`
      insert into personal ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash", idiomas)
      select 'PER-1990-0000' || i, now(), 'USR-1990-00001', now(), 'USR-1990-00001', 1, repeat('0', 64), v::jsonb
      from (values (1, '["es", {"idioma": "en", "nivel": "B2"}]'), (2, '["es"]'), (3, null)) as t(i, v)`)
    const em = app.orm.em.fork()
    const count = async (where: Where): Promise<number> => countRows(em, 'mod_personal', where)
    expect(await count({ idiomas: ['es', { nivel: 'B2', idioma: 'en' }] })).toBe(1)
    expect(await count({ idiomas: ['es'] })).toBe(1)
    expect(await count({ idiomas: ['es'], _id: { $ne: 'PER-1990-00002' } })).toBe(0)
    expect(await count({ idiomas: ['en'] })).toBe(0)
    expect(await count({ idiomas: [] })).toBe(0)
  })
})

/** How many of the 120 seeded rows satisfy `p` of their number. */
function seeded (p: (i: number) => boolean): number {
  let c = 0
  for (let i = 1; i <= 120; i++) if (p(i)) c++
  return c
}

/** The SQL statements one request ran on the table, with their statement names. */
const statementsOf = async (request: () => Promise<unknown>): Promise<Array<{ sql: string, name?: string }>> => (await sentBy(request)).filter((q) => /from "vehiculos"/.test(q.sql))

describe('named prepared statements', () => {
  it('a GET by id, the total of a list and a page one live index serves run as named statements (PostgreSQL); other pages and a search are planned for their values every time', async () => {
    const get = await statementsOf(async () => { expect((await admin.get('/vehiculos/VEH-1990-00001')).status).toBe(200) })
    expect(get).toHaveLength(1)
    // A named statement with its value as a parameter; on PGlite, prepared and run in SQL (db/session-statements.ts).
    expect(get[0]!.name).toMatch(usingPostgres ? /^s\d+_[0-9a-f]{24}$/ : /^e[0-9a-f]{8}_s\d+_[0-9a-f]{24}$/)
    expect(get[0]!.sql).not.toContain('VEH-1990-00001')
    const named = (list: Array<{ sql: string, name?: string }>, count: boolean): boolean => list.find((q) => /count\(/.test(q.sql) === count)!.name !== undefined
    // One equality on an indexed field, the default order: the page is read by the keys of that field's live index,
    // one plan for every value (db/record-indexes.ts), and the total keeps one plan.
    const keyed = await statementsOf(async () => { expect((await admin.get('/vehiculos?tipo=moto&limit=5&offset=5')).status).toBe(200) })
    expect(keyed).toHaveLength(2)
    expect({ page: named(keyed, false), total: named(keyed, true) }).toEqual({ page: true, total: true })
    // Two filters: which index serves the page best depends on the values, so it is planned for them every time.
    const list = await statementsOf(async () => { expect((await admin.get('/vehiculos?tipo=moto&estado=taller&limit=5')).status).toBe(200) })
    expect(list).toHaveLength(2)
    expect({ page: named(list, false), total: named(list, true) }).toEqual({ page: false, total: true })
    const search = await statementsOf(async () => { expect((await admin.get('/vehiculos?matricula[contiene]=M-1')).status).toBe(200) })
    expect(search).toHaveLength(2)
    expect(search.map((q) => q.name)).toEqual([undefined, undefined])
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
