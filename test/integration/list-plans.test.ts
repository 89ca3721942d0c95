/**
 * The list indexes (db/record-indexes.ts) over 100,000 rows, by EXPLAIN of
 * the queries a list runs (both storage modes): a filtered list's total is
 * an index-only count over the field's live-row count index (the value
 * alone, deduplicated; no heap visit to test `_deleted`), its first page in the default order comes off that
 * index without a sort (its keys, then its rows by key: the plan a named
 * statement keeps for every value is the same), and with `incluir_eliminados=true` the filter is
 * still served by indexes (live rows and deleted rows), never by a
 * sequential scan; every total is exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { bulkLoad } from '../helpers/bulk-load.js'
import { genericPlanNodes, planNodes, type PlanNode } from '../helpers/explain.js'
import type { Harness } from '../helpers/app.js'
import { ok, type Api } from '../helpers/http.js'
import { usingPostgres } from '../helpers/services.js'
import { startTestApp } from '../helpers/test-app.js'

let h: Harness, app: FastifyInstance, admin: Api

beforeAll(async () => {
  ({ h, app, admin } = await startTestApp())
  // ubicacion: 1 row in 1000 per value (selective); estado: a third each (broad); every 7th row deleted.
  await bulkLoad(h.db, 'sala092', `
    insert into sala092 ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash", "_deleted",
                         tipo_incidencia, descripcion, ubicacion, estado)
    select '092-1990-' || lpad(i::text, 6, '0'), now() - i * interval '1 second', 'USR-1990-00001', now(), 'USR-1990-00001', 1, repeat('0', 64),
           case when i % 7 = 0 then now() end,
           'normal', 'Llamada ' || i, 'Calle ' || (i % 1000), (array['pendiente', 'en_curso', 'resuelta'])[1 + i % 3]
    from generate_series(1, 100000) as i`)
  await h.db.query('vacuum analyze sala092')
}, 300_000)
afterAll(async () => { await h.close() })

/** The page and count queries of one list request, each with its plan, and the answer. */
async function listPlans (query: string): Promise<{ total: number, records: Array<Record<string, unknown>>, plans: Array<{ sql: string, bindings: unknown[], nodes: PlanNode[] }> }> {
  const seen: Array<{ sql: string, bindings: unknown[] }> = []
  const knex = app.orm.em.getConnection().getKnex()
  const onQuery = (q: { sql: string, bindings?: unknown[] }): void => { seen.push({ sql: q.sql, bindings: q.bindings ?? [] }) }
  knex.on('query', onQuery)
  let data: any
  try {
    data = ok(await admin.get(`/sala092${query}`))
  } finally {
    knex.off('query', onQuery)
  }
  const queries = seen.filter((q) => /from "sala092"/.test(q.sql))
  expect(queries, query).toHaveLength(2)
  const plans = []
  for (const q of queries) plans.push({ ...q, nodes: await planNodes(h.db, q) })
  return { total: data.total, records: data.records, plans }
}

const onTable = (nodes: PlanNode[]): PlanNode[] => nodes.filter((x) => x['Relation Name'] === 'sala092')
const countPlan = (plans: Array<{ sql: string, nodes: PlanNode[] }>): PlanNode[] => plans.find((p) => /count\(/.test(p.sql))!.nodes
const pagePlan = (plans: Array<{ sql: string, nodes: PlanNode[] }>): PlanNode[] => plans.find((p) => !/count\(/.test(p.sql))!.nodes

describe('filtered lists over 100,000 rows', () => {
  it.each([
    ['a selective filter', '?ubicacion=Calle%20123&limit=20', 'sala092_ubicacion', "ubicacion = 'Calle 123'"],
    ['a broad filter', '?estado=en_curso&limit=20', 'sala092_estado', "estado = 'en_curso'"],
  ])('%s: the total is an index-only count of the live rows, the page is read in order off an index', async (_what, query, prefix, condition) => {
    const { total, records, plans } = await listPlans(query)
    const [truth] = await h.db.query<{ n: number }>(`select count(*)::int as n from sala092 where ${condition} and _deleted is null`)
    expect(total).toBe(truth!.n)
    expect(records).toHaveLength(20)
    const count = onTable(countPlan(plans))
    expect(count.map((n) => [n['Node Type'], n['Index Name']]), query).toEqual([['Index Only Scan', `${prefix}_count_idx`]])
    // The page's keys off the live index in order, then its rows by key; no sort. The same in the plan
    // PostgreSQL keeps for the named statement whatever the value (a generic plan), where a page read
    // straight from the table had a generic plan that walked the default order's index through every
    // newer row of other values.
    const page = plans.find((p) => !/count\(/.test(p.sql))!
    for (const nodes of [page.nodes, await genericPlanNodes(h.db, page)]) {
      expect(onTable(nodes).map((n) => [n['Node Type'], n['Index Name']]), query).toEqual([['Index Only Scan', `${prefix}_live_idx`], ['Index Scan', 'sala092_pkey']])
      expect(nodes.map((n) => n['Node Type']), query).not.toContain('Sort')
    }
    // newest first, ties by _id
    const created = records.map((r) => r._created as string)
    expect([...created].sort().reverse()).toEqual(created)
  })

  it('with incluir_eliminados=true the filter is served by the live and the deleted rows\' indexes, never a sequential scan', async () => {
    const { total, plans } = await listPlans('?ubicacion=Calle%20123&incluir_eliminados=true&limit=20')
    expect(total).toBe(100)
    for (const p of plans) expect(onTable(p.nodes).map((n) => n['Node Type']), p.sql).not.toContain('Seq Scan')
    const indexes = countPlan(plans).map((n) => n['Index Name']).filter((n) => n !== undefined)
    expect(indexes).toEqual(expect.arrayContaining(['sala092_ubicacion_count_idx', 'sala092_deleted_idx']))
  })

  it('the service\'s connections plan no parallel workers: a broad total is counted by the request\'s own backend', async () => {
    // Through the service's own pool: db/open.ts sets max_parallel_workers_per_gather=0 on its PostgreSQL
    // connections (PGlite, one process, has no workers to start).
    const [setting] = await app.orm.em.getConnection().execute<Array<{ max_parallel_workers_per_gather: string }>>('show max_parallel_workers_per_gather')
    if (usingPostgres) expect(setting!.max_parallel_workers_per_gather).toBe('0')
    const rows = await app.orm.em.getConnection().execute<Array<{ 'QUERY PLAN': unknown }>>(
      "explain (format json) select count(*)::int as n from sala092 where estado = 'en_curso' and _deleted is null")
    const plan = rows[0]!['QUERY PLAN']
    const nodes: string[] = []
    const walk = (node: PlanNode): void => { nodes.push(String(node['Node Type'])); for (const c of (node.Plans as PlanNode[] | undefined) ?? []) walk(c) }
    walk((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan)
    expect(nodes).toContain('Index Only Scan')
    expect(nodes.filter((n) => /Gather/.test(n))).toEqual([])
  })

  it('the default order of an unfiltered list comes off the (_created, _id) index', async () => {
    const { total, plans } = await listPlans('?limit=20')
    const [truth] = await h.db.query<{ n: number }>('select count(*)::int as n from sala092 where _deleted is null')
    expect(total).toBe(truth!.n)
    const page = pagePlan(plans)
    expect(onTable(page).map((n) => n['Index Name'])).toEqual(['sala092_created_id_idx'])
    expect(page.map((n) => n['Node Type'])).not.toContain('Sort')
  })
})
