/**
 * The embedded database maintains itself (db/embedded-maintenance.ts):
 * after records are created through the API, their table is vacuumed and
 * analyzed — every page all-visible, so a filtered list's total stays an
 * index-only count — while requests keep answering; also after a restart
 * has lost PGlite's write counts. The embedded cases run in every run (an
 * embedded database of their own even when DATABASE_URL is set); on
 * PostgreSQL the service leaves the work to autovacuum and sends nothing.
 */
import { Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { client, login, ok, type Api } from '../helpers/http.js'
import { usingPostgres } from '../helpers/services.js'

const harnesses: Harness[] = []
afterAll(async () => { for (const h of harnesses) await h.close() })

async function harness (embedded: boolean): Promise<Harness> {
  const h = await createHarness({ embedded })
  harnesses.push(h)
  return h
}

/** Short rounds, and every write past the thresholds (test/unit/embedded-maintenance.test.ts has autovacuum's). */
const QUICK = { intervalMs: 100, vacuumThreshold: 0, vacuumScaleFactor: 0, insertThreshold: 0, insertScaleFactor: 0, analyzeThreshold: 0, analyzeScaleFactor: 0, pageThreshold: 0 }

interface TableFacts { pages: number, allVisible: number, vacuums: number, analyzes: number, inserted: number }

async function facts (h: Harness, table: string): Promise<TableFacts> {
  const [row] = await h.db.query<TableFacts>(`
    select (pg_relation_size(c.oid) / current_setting('block_size')::int)::int as pages, c.relallvisible::int as "allVisible",
           s.vacuum_count::int as vacuums, s.analyze_count::int as analyzes, s.n_ins_since_vacuum::int as inserted
    from pg_class c join pg_stat_user_tables s on s.relid = c.oid where c.oid = $1::regclass`, [table])
  return row!
}

/** `n` creates, ten at a time, each batch beside a filtered list with its total: every answer as usual. */
async function createThroughApi (api: Api, n: number): Promise<void> {
  for (let i = 0; i < n; i += 10) {
    const creates = Array.from({ length: Math.min(10, n - i) }, async (_, j) =>
      ok(await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: `Llamada ${i + j}`, categoria: (i + j) % 2 === 0 ? 'trafico' : 'ruidos' }), 201))
    const [list] = await Promise.all([api.get('/sala092?categoria=trafico&limit=20'), ...creates])
    expect(ok(list).total).toBeGreaterThanOrEqual(i / 2)
  }
}

/** Waits until every page of `table` is all-visible after at least one VACUUM and one ANALYZE, asking a list meanwhile. */
async function untilMaintained (h: Harness, api: Api, table: string, expectedTotal: number): Promise<TableFacts> {
  const deadline = Date.now() + 30_000
  let last = await facts(h, table)
  while (!(last.vacuums >= 1 && last.analyzes >= 1 && last.pages > 0 && last.allVisible === last.pages)) {
    if (Date.now() > deadline) throw new Error(`${table} not maintained: ${JSON.stringify(last)}`)
    expect(ok(await api.get('/sala092?categoria=trafico&limit=20')).total).toBe(expectedTotal)
    await new Promise((resolve) => setTimeout(resolve, 100))
    last = await facts(h, table)
  }
  return last
}

function logLines (): { stream: Writable, lines: Array<{ level: number, msg: string, table?: string }> } {
  const lines: Array<{ level: number, msg: string, table?: string }> = []
  const stream = new Writable({ write (chunk, _enc, done) { for (const l of String(chunk).split('\n')) if (l !== '') lines.push(JSON.parse(l)); done() } })
  return { stream, lines }
}

describe('the embedded database maintains itself', () => {
  it('vacuums and analyzes a table after records are created through the API, while requests answer', async () => {
    const h = await harness(true)
    const log = logLines()
    const app = await h.app({ maintenance: QUICK, env: { LOG_LEVEL: 'debug' }, logStream: log.stream })
    const api = client(app, await login(app))
    expect(app.databaseKind).toBe('embedded')
    await createThroughApi(api, 300)
    const done = await untilMaintained(h, api, 'sala092', 150)
    expect(done.allVisible).toBeGreaterThan(0)
    // The history of those creates too (each write appends to it).
    const history = await h.db.query<{ table: string }>("select relid::regclass::text as table from pg_stat_user_tables where vacuum_count > 0 and relname like '%hist%'")
    expect(history.length).toBeGreaterThan(0)
    await h.closeApp(app)
    const maintenance = log.lines.filter((l) => l.msg.startsWith('embedded database'))
    expect(maintenance.some((l) => l.msg.includes('vacuumed and analyzed') && l.table === 'public.sala092'), JSON.stringify(maintenance)).toBe(true)
    // No round failed, the last one included: closing waited for it.
    expect(maintenance.filter((l) => l.level >= 40)).toEqual([])
    expect(await h.db.query('select 1 as one')).toEqual([{ one: 1 }])
  })

  it('also after a restart lost the write counts (PGlite keeps them in memory only): the pages tell', async () => {
    const h = await harness(true)
    const first = await h.app()
    await createThroughApi(client(first, await login(first)), 200)
    await h.closeApp(first)
    // PGlite adds a statement's counts to the statistics at its end, at most once a second: these go in first.
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    await h.db.query('select 1')
    // What a restart of PGlite does to the counts (pg_stat_reset: the same, without a restart).
    await h.db.query('select pg_stat_reset()')
    const before = await facts(h, 'sala092')
    expect(before).toMatchObject({ vacuums: 0, inserted: 0 })
    expect(before.allVisible).toBeLessThan(before.pages)
    const app = await h.app({ maintenance: { ...QUICK, insertThreshold: 1_000_000 } })
    await untilMaintained(h, client(app, await login(app)), 'sala092', 100)
  })
})

if (usingPostgres) {
  it('leaves PostgreSQL to its autovacuum: no VACUUM or ANALYZE, no round', async () => {
    const h = await harness(false)
    const app: FastifyInstance = await h.app({ maintenance: QUICK })
    expect(app.databaseKind).toBe('postgresql')
    const sent: string[] = []
    const knex = app.orm.em.getConnection().getKnex()
    const onQuery = (q: { sql: string }): void => { sent.push(q.sql) }
    knex.on('query', onQuery)
    try {
      await createThroughApi(client(app, await login(app)), 300)
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    } finally {
      knex.off('query', onQuery)
    }
    expect(sent.filter((sql) => /^\s*(vacuum|analyze)\b|pg_stat_user_tables/i.test(sql))).toEqual([])
    // vacuum_count and analyze_count count manual runs only (autovacuum has its own columns).
    expect(await facts(h, 'sala092')).toMatchObject({ vacuums: 0, analyzes: 0 })
  })
}
