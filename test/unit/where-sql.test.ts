/**
 * db/where-sql.ts alone: the records layer's filter objects in, SQL with
 * numbered parameters and their values out; a TypeError for anything
 * outside the vocabulary (a programmer error: there is no other query
 * path). That the SQL selects exactly the rows a filter means is proven
 * against the database in test/integration/direct-reads.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { orderSql, whereSql } from '../../db/where-sql.js'

function compile (where: unknown): { sql: string, params: unknown[] } {
  const params: unknown[] = []
  return { sql: whereSql(where, params), params }
}

describe('whereSql', () => {
  const when = new Date('2026-01-02T03:04:05Z')
  it.each<[string, unknown, string, unknown[]]>([
    ['an empty filter', {}, 'true', []],
    ['equality', { _id: 'REC-2026-00001' }, '"_id" = $1', ['REC-2026-00001']],
    ['null', { _deleted: null }, '"_deleted" is null', []],
    ['two columns', { _id: 'x', _deleted: null }, '"_id" = $1 and "_deleted" is null', ['x']],
    ['not null', { _deleted: { $ne: null } }, '"_deleted" is not null', []],
    ['not equal', { estado: { $ne: 'abierta' } }, '"estado" <> $1', ['abierta']],
    ['a list', { estado: { $in: ['a', 'b'] } }, '"estado" in ($1, $2)', ['a', 'b']],
    ['not in a list', { estado: { $nin: ['a'] } }, '"estado" not in ($1)', ['a']],
    ['a range', { _created: { $gte: when, $lt: when } }, '"_created" >= $1 and "_created" < $2', [when, when]],
    ['numbers and booleans', { n: { $gt: 3 }, activo: true }, '"n" > $1 and "activo" = $2', [3, true]],
    ['an empty list: nothing, or everything', { a: { $in: [] }, b: { $nin: [] } }, 'false and true', []],
    ['a pattern, case-insensitive', { _id: { $ilike: '%den-2026%' } }, '"_id" ilike $1', ['%den-2026%']],
    ['an array: a jsonb column equal to it', { idiomas: ['es', { nivel: 'B2' }] }, '"idiomas" = $1::jsonb', ['["es",{"nivel":"B2"}]']],
    ['and/or, in order', { $and: [{ _id: 'x' }, { $or: [{ _created_by: 'u' }, { agente: 'p' }] }] },
      '("_id" = $1) and (("_created_by" = $2) or ("agente" = $3))', ['x', 'u', 'p']],
    ['a search condition, numbered on (an any-of group)', { $or: [{ estado: 'a' }, { $sql: { sql: 'search_fold("d") like search_fold(?)', params: ['%x%'] } }] },
      '("estado" = $1) or ((search_fold("d") like search_fold($2)))', ['a', '%x%']],
  ])('%s', (_what, where, sql, params) => {
    expect(compile(where)).toEqual({ sql, params })
  })

  it.each<[string, unknown]>([
    ['a raw fragment key', { '[raw]: search_fold(x) like ?': [] }],
    ['an object value', { tags: { a: 1 } }],
    ['an unknown operator', { n: { $like: 'a%' } }],
    ['a pattern that is no text', { n: { $ilike: 3 } }],
    ['a list with an object', { n: { $in: [{}] } }],
    ['a quoted name', { 'a"b': 1 }],
    ['an empty $or', { $or: [] }],
    ['a raw fragment inside $or', { $or: [{ _id: 'x' }, { '[raw]': [] }] }],
    ['no object', 'x'],
    ['a $sql that is no search condition', { $sql: 'true' }],
  ])('%s leaves the vocabulary: a TypeError', (_what, where) => {
    expect(() => compile(where)).toThrow(TypeError)
    expect(() => compile(where)).toThrow(/outside the vocabulary of db\/where-sql\.ts/)
  })

  it('refuses a $sql whose values do not match its placeholders: a TypeError', () => {
    expect(() => compile({ $sql: { sql: '"a" = ?', params: [] } })).toThrow(/0 values for 1 placeholders/)
  })

  it('names what left the vocabulary, never a value (a filter holds personal data)', () => {
    const messageOf = (where: unknown): string => { try { compile(where); return '' } catch (err) { return (err as Error).message } }
    const like = messageOf({ _deleted: null, denunciante_dni: { $like: '48151623L' } })
    expect(like).toContain('"denunciante_dni" $like (string)')
    expect(like).not.toContain('48151623L')
    const list = messageOf({ $or: [{ _id: 'x' }, { tags: { $in: [['48151623L']] } }] })
    expect(list).toContain('"tags" $in (an array of 1)')
    expect(list).not.toContain('48151623L')
    expect(messageOf({ dni: { $in: [{ n: '48151623L' }] } })).toContain('"dni" $in (an array of 1)')
  })
})

describe('orderSql', () => {
  it('orders by columns in turn', () => {
    expect(orderSql([{ _created: 'desc' }, { _id: 'desc' }])).toBe('"_created" desc, "_id" desc')
    expect(orderSql([])).toBe('')
  })
  it('refuses raw fragments and unknown directions: a TypeError', () => {
    expect(() => orderSql([{ '[raw]: ts_rank(?)': 'desc' }])).toThrow(TypeError)
    expect(() => orderSql([{ _id: 'sideways' }])).toThrow(TypeError)
  })
})
