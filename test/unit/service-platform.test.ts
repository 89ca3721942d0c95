/**
 * The embedded database's inlined string literals (db/service-platform.ts)
 * are exactly what node-postgres's `escapeLiteral` wrote before, for any
 * text: quotes, backslashes, the two together, any Unicode; and a query
 * with its values inlined is the text MikroORM's own platform writes.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import pg from 'pg'
import { PostgreSqlPlatform } from '@mikro-orm/postgresql'
import { quoteLiteral, ServicePlatform } from '../../db/service-platform.js'

const before = (s: string): string => pg.Client.prototype.escapeLiteral(s)

describe('db/service-platform.ts', () => {
  it('quotes as node-postgres did: quotes and backslashes doubled, E before a backslash', () => {
    expect(quoteLiteral("O'Brien")).toBe("'O''Brien'")
    expect(quoteLiteral('C:\\temp')).toBe(" E'C:\\\\temp'")
    expect(quoteLiteral("a'\\b")).toBe(" E'a''\\\\b'")
    expect(quoteLiteral('')).toBe("''")
    for (const s of ["O'Brien", 'C:\\temp', "a'\\b", '', "''", '\\\\', 'ñandú "x"']) expect(quoteLiteral(s)).toBe(before(s))
  })

  it('writes the same literal as node-postgres for any string', () => {
    const text = fc.string({ unit: fc.constantFrom("'", '\\', 'a', 'ñ', '"', ' ', '\u0000', '😀'), maxLength: 40 })
    fc.assert(fc.property(fc.oneof(text, fc.string({ unit: 'binary' })), (s) => quoteLiteral(s) === before(s)), { numRuns: 2000 })
  })

  it('is the platform\'s escape for strings, and leaves every other value to MikroORM', () => {
    const platform = new ServicePlatform()
    expect(platform.escape("it's")).toBe("'it''s'")
    expect(platform.escape(42)).toBe('42')
    expect(platform.escape(null)).toBe('NULL')
    expect(platform.escape(['a', "b'"])).toBe("'a', 'b'''")
  })

  it('inlines a query\'s values as MikroORM\'s platform does', () => {
    const ours = new ServicePlatform()
    const theirs = new PostgreSqlPlatform()
    const piece = fc.string({ unit: fc.constantFrom('a', ' ', ',', '(', ')', '\'', '?', '\\'), maxLength: 12 })
    const value = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null), fc.date({ noInvalidDate: true }))
    fc.assert(fc.property(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.array(value, { maxLength: 6 }), (pieces, values) => {
      const sql = pieces.join('?')
      const params = values.slice(0, pieces.length - 1)
      const outcome = (p: PostgreSqlPlatform): string => { try { return p.formatQuery(sql, params) } catch (err) { return `throws ${(err as Error).name}` } }
      // Twice: the second reads the text's pieces as kept.
      return outcome(ours) === outcome(theirs) && outcome(ours) === outcome(theirs)
    }), { numRuns: 2000 })
    expect(ours.formatQuery('select ?? from t where a = ?', ['x', "o'k"])).toBe(theirs.formatQuery('select ?? from t where a = ?', ['x', "o'k"]))
  })
})
