/**
 * Any-of groups (docs/user-guide.md "Any-of filters (o[N])") as parseListQuery
 * reads them alone: each group one `$or` of conditions read as plain
 * filters are, ANDed with the rest; a malformed group is a 400 naming the
 * parameter as sent. Through HTTP and the database: test/integration/any-of.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createFieldCipher } from '../../core/crypto.js'
import { AppError } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import { parseListQuery, type ListQuery } from '../../records/list-query.js'
import { whereSql } from '../../db/where-sql.js'

const registry = loadRegistry('modules.yaml')
const cipher = createFieldCipher([Buffer.alloc(32, 7)], { indexKey: Buffer.alloc(32, 8), integrityKey: Buffer.alloc(32, 9) })
const vehiculos = registry.byName.get('vehiculos')!
const denuncias = registry.byName.get('denuncias')!

type Q = Record<string, string | string[] | undefined>
const parse = (query: Q, mod = vehiculos): ListQuery => parseListQuery(mod, query, 'Europe/Madrid', cipher)

/** The `detalles` of the 400 a query gets. */
function rejection (query: Q, mod = vehiculos): { campo: string, mensaje: string } {
  try { parse(query, mod) } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('DATOS_INVALIDOS')
    return (err as AppError).detalles![0]!
  }
  throw new Error(`expected ${JSON.stringify(query)} to be rejected`)
}

describe('a group', () => {
  it('is an $or of its conditions, ANDed with the plain filters and the live rows', () => {
    expect(parse({ marca: 'Seat', 'o[1][estado]': 'taller', 'o[1][tipo][in]': 'moto,furgon' }).where).toEqual({
      $and: [{ marca: 'Seat' }, { $or: [{ estado: 'taller' }, { tipo: { $in: ['moto', 'furgon'] } }] }, { _deleted: null }],
    })
  })

  it('groups are ANDed with each other, in the order of their numbers; a group of one is its condition', () => {
    const { where } = parse({ 'o[2][km_actuales][gt]': '5', 'o[1][estado]': 'taller', 'o[2][km_actuales][vacio]': 'true', 'o[3][marca][ne]': 'Seat' })
    expect(where).toEqual({
      $and: [
        { estado: 'taller' },
        { $or: [{ km_actuales: { $gt: 5 } }, { km_actuales: null }] },
        { $or: [{ marca: { $ne: 'Seat' } }, { marca: null }] },
        { _deleted: null },
      ],
    })
  })

  it('a repeated equality is any of its values, as in a plain filter', () => {
    expect(parse({ 'o[1][estado]': ['taller', 'baja'], 'o[1][marca]': 'Seat' }).where).toEqual({
      $and: [{ $or: [{ estado: { $in: ['taller', 'baja'] } }, { marca: 'Seat' }] }, { _deleted: null }],
    })
  })

  it('a search condition in SQL (contiene on text) is embedded in the $or, its text a bound value', () => {
    const q = parse({ 'o[1][descripcion][contiene]': "x' or 1=1 --", 'o[1][estado]': 'archivada' }, denuncias)
    expect(q.search).toEqual([])
    const params: unknown[] = []
    expect(whereSql(q.where, params)).toBe('(((search_fold("descripcion") like search_fold($1))) or ("estado" = $2)) and ("_deleted" is null)')
    expect(params).toEqual(["%x' or 1=1 --%", 'archivada'])
  })

  it('a searchable encrypted field: its blind index, and the read log names it (once)', () => {
    const q = parse({ 'o[1][denunciante_dni]': '12345678Z', 'o[1][estado]': 'pendiente', 'denunciante_dni[vacio]': 'false' }, denuncias)
    expect(q.filtersEncrypted).toBe(true)
    expect(q.encryptedFields).toEqual(['denunciante_dni'])
    expect(JSON.stringify(q.where)).not.toContain('12345678Z')
  })

  it('no group, no change: the plain filters alone', () => {
    expect(parse({ estado: 'taller' }).where).toEqual({ $and: [{ estado: 'taller' }, { _deleted: null }] })
  })
})

describe('a malformed group: 400 naming the parameter as sent', () => {
  it.each<[Q, RegExp]>([
    [{ 'o[0][estado]': 'taller' }, /del 1 al 9/],
    [{ 'o[10][estado]': 'taller' }, /del 1 al 9/],
    [{ 'o[x][estado]': 'taller' }, /del 1 al 9/],
    [{ 'o[][estado]': 'taller' }, /del 1 al 9/],
    [{ 'o[1]': 'taller' }, /falta el campo/],
    [{ o: 'taller' }, /grupo mal formado/],
    [{ 'o[1][estado][eq][x]': 'taller' }, /grupo mal formado/],
    [{ 'o[1][estado]x': 'taller' }, /grupo mal formado/],
    [{ 'o[1][estdo]': 'taller' }, /campo desconocido "estdo" \(¿quería decir "estado"\?\)/],
    [{ 'o[1][km_actuales][mayor]': '5' }, /operador desconocido "mayor"/],
    [{ 'o[1][km_actuales][contiene]': '5' }, /no se aplica/],
    [{ 'o[1][km_actuales][gt]': 'cinco' }, /entero/],
    [{ 'o[1][km_actuales][gt]': ['1', '2'] }, /varios valores/],
    [{ 'o[1][estado][vacio]': 'si' }, /true o false/],
    [{ 'o[1][fecha_itv][gte]': '2026-13-01' }, /./],
  ])('%j', (query, mensaje) => {
    const d = rejection(query)
    expect(d.campo).toBe(Object.keys(query)[0])
    expect(d.mensaje).toMatch(mensaje)
  })

  it('a field that takes no filter, named as sent', () => {
    expect(rejection({ 'o[1][denunciante_telefono]': '600' }, denuncias).campo).toBe('o[1][denunciante_telefono]')
    expect(rejection({ 'o[1][descripcion]': 'robo' }, denuncias).campo).toBe('o[1][descripcion]')
  })
})
