/**
 * Autovacuum's job for the embedded database. PGlite is PostgreSQL in one
 * session with no background workers, so nothing vacuums or analyzes its
 * tables: after many writes the visibility map stays empty (a filtered
 * list's total, an index-only count, then visits every heap page) and the
 * planner's statistics go stale (docs/performance.md "Embedded mode against
 * the ceiling"). Every `intervalMs` this reads each table's write counts and
 * runs `VACUUM (ANALYZE)` or `ANALYZE` on the tables past autovacuum's own
 * default thresholds, one table at a time (docs/operations.md "The embedded
 * database maintains itself").
 *
 * Two sources, because PGlite keeps its statistics in memory only (a restart
 * resets them, as a crash does on PostgreSQL):
 * - pg_stat_user_tables (dead rows, rows inserted since the last vacuum,
 *   rows changed since the last analyze), which PGlite does keep while it
 *   runs (flushed at the end of a statement, at most once a second);
 * - the table's size against pg_class.relallvisible (the pages the last
 *   vacuum or analyze found all-visible), which survives a restart: pages
 *   added since then are pages an index-only scan must visit.
 */

/** Autovacuum's thresholds (PostgreSQL's defaults), and how often to look. */
export interface MaintenanceSettings {
  /** Between rounds (autovacuum_naptime). */
  readonly intervalMs: number
  /** Dead rows: vacuum past threshold + scale × rows (autovacuum_vacuum_threshold, _scale_factor). */
  readonly vacuumThreshold: number
  readonly vacuumScaleFactor: number
  /** Rows inserted since the last vacuum (autovacuum_vacuum_insert_threshold, _scale_factor). */
  readonly insertThreshold: number
  readonly insertScaleFactor: number
  /** Rows changed since the last analyze (autovacuum_analyze_threshold, _scale_factor). */
  readonly analyzeThreshold: number
  readonly analyzeScaleFactor: number
  /** Pages not all-visible: vacuum past threshold + insertScaleFactor × pages (no PostgreSQL setting: see above). */
  readonly pageThreshold: number
}

export const AUTOVACUUM_DEFAULTS: MaintenanceSettings = {
  intervalMs: 60_000,
  vacuumThreshold: 50,
  vacuumScaleFactor: 0.2,
  insertThreshold: 1000,
  insertScaleFactor: 0.2,
  analyzeThreshold: 50,
  analyzeScaleFactor: 0.1,
  // About 1,000 rows of a module table: the insert threshold in pages.
  pageThreshold: 32,
}

/** What one round reads of a table. */
export interface TableState {
  readonly oid: number
  /** Schema-qualified and quoted by PostgreSQL (format('%I.%I')). */
  readonly table: string
  /** pg_class.reltuples: rows at the last vacuum or analyze; -1 never. */
  readonly reltuples: number
  /** The table's size now, in pages. */
  readonly pages: number
  /** pg_class.relallvisible: all-visible pages at the last vacuum or analyze. */
  readonly allVisible: number
  readonly dead: number
  readonly inserted: number
  readonly modified: number
  /** The table's own autovacuum_analyze_scale_factor (its reloptions), when it sets one. */
  readonly analyzeScaleFactor?: number | null
}

export interface Work {
  readonly statement: 'vacuum' | 'analyze'
  readonly reason: string
}

/** Pages added since the last vacuum or analyze, less those its last vacuum here could not mark (`settled`). */
function unmarkedPages (t: TableState, settled: number): number {
  return Math.max(t.pages - t.allVisible, 0) - settled
}

/**
 * What a table needs now, if anything: autovacuum's rules, plus the pages
 * a lost count (a restart) would hide. `settled`: the pages still not
 * all-visible right after this process last vacuumed the table, so a page
 * that cannot be marked does not bring the table back every round.
 */
export function workFor (t: TableState, s: MaintenanceSettings, settled = 0): Work | undefined {
  if (t.pages === 0) return undefined
  const rows = Math.max(t.reltuples, 0)
  if (t.dead > s.vacuumThreshold + s.vacuumScaleFactor * rows) return { statement: 'vacuum', reason: `${t.dead} dead rows` }
  if (t.inserted > s.insertThreshold + s.insertScaleFactor * rows) return { statement: 'vacuum', reason: `${t.inserted} rows inserted since the last vacuum` }
  const unmarked = unmarkedPages(t, settled)
  if (unmarked > s.pageThreshold + s.insertScaleFactor * t.pages) return { statement: 'vacuum', reason: `${unmarked} of ${t.pages} pages not all-visible` }
  if (t.modified > s.analyzeThreshold + (t.analyzeScaleFactor ?? s.analyzeScaleFactor) * rows) return { statement: 'analyze', reason: `${t.modified} rows changed since the last analyze` }
  if (t.reltuples < 0) return { statement: 'analyze', reason: 'never analyzed' }
  return undefined
}

/** Every table of the database with its counts; `oid`: one table only. */
function tablesSql (oid?: number): string {
  return `select c.oid::int8::float8 as oid, format('%I.%I', n.nspname, c.relname) as "table", c.reltuples::float8 as reltuples,
    (pg_relation_size(c.oid) / current_setting('block_size')::int)::float8 as pages, c.relallvisible::float8 as "allVisible",
    coalesce(s.n_dead_tup, 0)::float8 as dead, coalesce(s.n_ins_since_vacuum, 0)::float8 as inserted,
    coalesce(s.n_mod_since_analyze, 0)::float8 as modified,
    (select substr(o, 33)::float8 from unnest(c.reloptions) o where o like 'autovacuum\\_analyze\\_scale\\_factor=%') as "analyzeScaleFactor"
  from pg_class c join pg_namespace n on n.oid = c.relnamespace left join pg_stat_user_tables s on s.relid = c.oid
  where c.relkind = 'r' and n.nspname <> 'information_schema' and n.nspname not like 'pg\\_%'${oid === undefined ? '' : ` and c.oid = ${oid}`}
  order by 1`
}

/** One statement at a time outside any transaction (VACUUM refuses a transaction block): the ORM's connection fits. */
export interface SqlRunner {
  execute (sql: string): Promise<unknown>
}

/** Where the rounds report (a pino logger fits). */
export interface MaintenanceLogger {
  debug (obj: object, msg: string): void
  info (obj: object, msg: string): void
  warn (obj: object, msg: string): void
}

export interface EmbeddedMaintenance {
  /** One round now (unless one runs: then that one); the timer's rounds are the same. */
  round (): Promise<void>
  /** No round after this; waits for the statement running, if any (a PGlite statement cannot be cancelled). */
  stop (): Promise<void>
}

/** A statement that held the only session this long is worth an info line: requests waited for it. */
const LONG_MS = 1_000

/** Starts the rounds (the timer does not keep the process alive). */
export function startEmbeddedMaintenance (db: SqlRunner, log: MaintenanceLogger, settings: Partial<MaintenanceSettings> = {}): EmbeddedMaintenance {
  const s: MaintenanceSettings = { ...AUTOVACUUM_DEFAULTS, ...settings }
  const settled = new Map<number, number>()
  let stopped = false
  let running: Promise<void> | undefined

  const read = async (oid?: number): Promise<TableState[]> => await db.execute(tablesSql(oid)) as TableState[]

  const maintain = async (t: TableState, work: Work): Promise<void> => {
    const started = Date.now()
    await db.execute(work.statement === 'vacuum' ? `vacuum (analyze) ${t.table}` : `analyze ${t.table}`)
    const ms = Date.now() - started
    if (work.statement === 'vacuum' && !stopped) {
      const [after] = await read(t.oid)
      if (after !== undefined) settled.set(t.oid, unmarkedPages(after, 0))
    }
    const what = work.statement === 'vacuum' ? 'vacuumed and analyzed' : 'analyzed'
    const fields = { table: t.table, reason: work.reason, ms }
    if (ms >= LONG_MS) log.info(fields, `embedded database: ${what} ${t.table} (requests waited ${ms} ms)`)
    else log.debug(fields, `embedded database: ${what} ${t.table}`)
  }

  const once = async (): Promise<void> => {
    let tables: TableState[]
    try {
      tables = await read()
    } catch (err) {
      log.warn({ err }, 'embedded database: could not read the tables\' write counts; trying again at the next round')
      return
    }
    for (const t of tables) {
      if (stopped) return
      const work = workFor(t, s, settled.get(t.oid) ?? 0)
      if (work === undefined) continue
      try {
        await maintain(t, work)
      } catch (err) {
        log.warn({ err, table: t.table, reason: work.reason }, `embedded database: ${work.statement} ${t.table} failed; trying again at the next round`)
      }
    }
  }

  const round = (): Promise<void> => {
    if (stopped) return Promise.resolve()
    running ??= once().finally(() => { running = undefined })
    return running
  }

  const timer = setInterval(() => { void round() }, s.intervalMs)
  timer.unref()
  return {
    round,
    async stop () {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
