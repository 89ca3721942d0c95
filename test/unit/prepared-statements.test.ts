/**
 * db/prepared-statements.ts alone: which texts get a statement name, what
 * values are sent, and what a refused or outdated statement turns into.
 * That the service's reads and writes run as named statements is checked
 * through the database in test/integration/direct-reads.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { isStalePlan, isUntypedParameter } from '../../core/postgres-errors.js'
import { PreparedStatements } from '../../db/prepared-statements.js'

describe('PreparedStatements', () => {
  it('names a text by its hash, the same name every time, within PostgreSQL\'s 63 characters', () => {
    const s = new PreparedStatements()
    const a = s.name('select 1 from t where "_id" = $1')!
    expect(a).toMatch(/^s0_[0-9a-f]{24}$/)
    expect(s.name('select 1 from t where "_id" = $1')).toBe(a)
    expect(s.name('select 2 from t where "_id" = $1')).not.toBe(a)
  })

  it('leaves pattern-dependent searches unnamed: their best plan depends on the pattern', () => {
    const s = new PreparedStatements()
    for (const sql of ['select 1 from t where doc @@ websearch_to_tsquery($1)', 'select 1 from t where search_fold(a) like $1', 'select 1 from t where a ILIKE $1', 'select 1 from t where a % $1']) {
      expect(s.name(sql), sql).toBeUndefined()
    }
  })

  it('leaves ordered pages unnamed: which index serves them depends on the values', () => {
    const s = new PreparedStatements()
    expect(s.name('select "_id" from t where "c" = $1 order by "_created" desc, "_id" desc limit 20')).toBeUndefined()
    expect(s.name('select "_id" from t where "_id" = $1 limit 1')).toBeDefined()
    expect(s.name('select count(*)::int as n from t where "c" = $1')).toBeDefined()
  })

  it('names an ordered page whose caller says one plan serves every value (a page read by the keys of one index)', () => {
    const s = new PreparedStatements()
    const keyed = 'select "a" from t join (select "_id" as "_key" from t where "c" = $1 order by "_created" desc limit 20) "_page" on "_id" = "_page"."_key"'
    expect(s.name(keyed, true)).toMatch(/^s0_[0-9a-f]{24}$/)
    expect(new PreparedStatements().name(keyed)).toBeUndefined()
    // A pattern-dependent search stays unnamed whatever the caller says.
    expect(s.name('select "a" from t where search_fold("b") like $1 order by "_created" limit 20', true)).toBeUndefined()
  })

  it('names at most `limit` texts, so texts without end cannot grow the server\'s memory', () => {
    const s = new PreparedStatements(2)
    expect(s.name('select $1')).toBeDefined()
    expect(s.name('select $1, $2')).toBeDefined()
    expect(s.name('select $1, $2, $3')).toBeUndefined()
    expect(s.name('select $1')).toBeDefined() // still known
  })

  it('numbers MikroORM\'s `?` placeholders once per text, and names the numbered text', () => {
    const s = new PreparedStatements()
    const a = s.statement('select 1 from t where "_id" = ? and "c" = ?')
    expect(a.text).toBe('select 1 from t where "_id" = $1 and "c" = $2')
    expect(a.name).toBe(s.name('select 1 from t where "_id" = $1 and "c" = $2'))
    expect(s.statement('select 1 from t where "_id" = ? and "c" = ?')).toBe(a)
    expect(s.statement('select 1 from t where a ilike ?')).toEqual({ text: 'select 1 from t where a ilike $1', name: undefined })
  })

  it('past `limit` texts, still numbers a new text but leaves it unnamed', () => {
    const s = new PreparedStatements(1)
    expect(s.statement('select ?').name).toBeDefined()
    expect(s.statement('select ?, ?')).toEqual({ text: 'select $1, $2', name: undefined })
  })

  it('sends scalars as they are and dates as ISO text; anything else is inlined by MikroORM', () => {
    const s = new PreparedStatements()
    expect(s.values(['a', 1, true, null, new Date('2026-01-02T03:04:05.678Z')])).toEqual(['a', 1, true, null, '2026-01-02T03:04:05.678Z'])
    expect(s.values([['a']])).toBeUndefined()
    expect(s.values([{ a: 1 }])).toBeUndefined()
    expect(s.values([Buffer.from('x')])).toBeUndefined()
  })

  it('a refused text is never named again; forget() renames every text', () => {
    const s = new PreparedStatements()
    const text = 'select $1'
    const first = s.name(text)!
    s.refuse(text)
    expect(s.name(text)).toBeUndefined()
    expect(s.statement('select ?').name).toBeUndefined() // the same text once numbered
    const other = s.name('select $1 + 1')!
    s.forget()
    const renamed = s.name('select $1 + 1')!
    expect(renamed).not.toBe(other)
    expect(renamed.startsWith('s1_')).toBe(true)
    expect(first.startsWith('s0_')).toBe(true)
  })

  it('tells PostgreSQL\'s two answers apart from any other error', () => {
    expect(isUntypedParameter({ code: '42P18' })).toBe(true)
    expect(isUntypedParameter({ code: '23505' })).toBe(false)
    expect(isStalePlan(Object.assign(new Error('cached plan must not change result type'), { code: '0A000' }))).toBe(true)
    expect(isStalePlan(Object.assign(new Error('feature not supported'), { code: '0A000' }))).toBe(false)
  })
})
