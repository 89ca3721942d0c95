/** When the embedded database's rounds vacuum or analyze a table (db/embedded-maintenance.ts): autovacuum's default thresholds. */
import { describe, expect, it } from 'vitest'
import { AUTOVACUUM_DEFAULTS, startEmbeddedMaintenance, workFor, type TableState } from '../../db/embedded-maintenance.js'

/** A table of 10,000 rows on 400 pages, all visible, nothing written since its last vacuum. */
const table = (over: Partial<TableState> = {}): TableState =>
  ({ oid: 1, table: 'public.t', reltuples: 10_000, pages: 400, allVisible: 400, dead: 0, inserted: 0, modified: 0, ...over })
const statement = (t: TableState, settled?: number): string | undefined => workFor(t, AUTOVACUUM_DEFAULTS, settled)?.statement

describe('workFor', () => {
  it('leaves a table alone below every threshold, and an empty one always', () => {
    expect(statement(table())).toBeUndefined()
    expect(statement(table({ dead: 2_050, inserted: 3_000, modified: 1_050, allVisible: 300 }))).toBeUndefined()
    expect(statement(table({ pages: 0, allVisible: 0, reltuples: -1, inserted: 50_000 }))).toBeUndefined()
  })

  it('vacuums past 50 + 20 % dead rows, and past 1,000 + 20 % rows inserted since the last vacuum', () => {
    expect(statement(table({ dead: 2_051 }))).toBe('vacuum')
    expect(statement(table({ inserted: 3_001 }))).toBe('vacuum')
    // A table never vacuumed counts as empty: its first 1,001 rows are enough.
    expect(statement(table({ reltuples: -1, pages: 20, allVisible: 0, inserted: 1_001 }))).toBe('vacuum')
  })

  it('analyzes past 50 + 10 % rows changed since the last analyze, and a table never analyzed', () => {
    expect(statement(table({ modified: 1_051 }))).toBe('analyze')
    expect(statement(table({ reltuples: -1, pages: 3, allVisible: 0 }))).toBe('analyze')
  })

  it("honours a table's own autovacuum_analyze_scale_factor (the history's and the chain's 0.5, db/column-statistics.ts)", () => {
    expect(statement(table({ modified: 5_050, analyzeScaleFactor: 0.5 }))).toBeUndefined()
    expect(statement(table({ modified: 5_051, analyzeScaleFactor: 0.5 }))).toBe('analyze')
    expect(statement(table({ modified: 1_051, analyzeScaleFactor: null }))).toBe('analyze')
  })

  it('vacuums a table whose pages are not all visible though no count says so (a restart lost them)', () => {
    // 400 pages: past 32 + 20 % of them = 112 unmarked pages.
    expect(statement(table({ pages: 400, allVisible: 287 }))).toBe('vacuum')
    expect(statement(table({ pages: 400, allVisible: 288 }))).toBeUndefined()
    expect(workFor(table({ allVisible: 0 }), AUTOVACUUM_DEFAULTS)?.reason).toBe('400 of 400 pages not all-visible')
  })

  it('does not come back every round for pages its own last vacuum could not mark', () => {
    expect(statement(table({ allVisible: 200 }), 200)).toBeUndefined()
    expect(statement(table({ allVisible: 50 }), 200)).toBe('vacuum')
  })
})

describe('stop', () => {
  it('waits for the statement running, and sends nothing after it', async () => {
    const sent: string[] = []
    let finish!: () => void
    const db = {
      async execute (sql: string): Promise<unknown[]> {
        sent.push(sql.trim().split(/\s+/)[0]!.toLowerCase())
        if (sql.startsWith('vacuum')) await new Promise<void>((resolve) => { finish = resolve })
        // The round's read: one table past the insert threshold (then vacuumed).
        return sql.startsWith('vacuum') ? [] : [table({ inserted: 50_000, allVisible: 0 })]
      },
    }
    const quiet = { debug () {}, info () {}, warn () {} }
    const m = startEmbeddedMaintenance(db, quiet, { intervalMs: 3_600_000 })
    const round = m.round()
    for (let i = 0; i < 20 && !sent.includes('vacuum'); i++) await new Promise((resolve) => setImmediate(resolve))
    expect(sent).toEqual(['select', 'vacuum'])
    let stopped = false
    const stopping = m.stop().then(() => { stopped = true })
    await new Promise((resolve) => setImmediate(resolve))
    expect(stopped).toBe(false) // the vacuum still runs
    finish()
    await stopping
    await round
    expect(sent).toEqual(['select', 'vacuum']) // no read of the table after the vacuum, no other round
  })
})
