/**
 * parseListQuery (docs/user-guide.md "Listing") alone: query text in, ORM filter,
 * order and page out, or a 400 `Datos inválidos` naming the parameter.
 */
import { describe, expect, it } from 'vitest'
import { createFieldCipher } from '../../core/crypto.js'
import { AppError, ERRORS } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import { parseListQuery, type ListQuery } from '../../records/list-query.js'
import { documentColumn } from '../../db/search-sql.js'

const registry = loadRegistry('modules.yaml')
const cipher = createFieldCipher([Buffer.alloc(32, 7)], { indexKey: Buffer.alloc(32, 8), integrityKey: Buffer.alloc(32, 9) })
const TZ = 'Europe/Madrid'
const vehiculos = registry.byName.get('vehiculos')!
const personal = registry.byName.get('personal')!
const usuarios = registry.byName.get('usuarios')!

type Q = Record<string, string | string[] | undefined>
const parse = (query: Q, mod = vehiculos): ListQuery => parseListQuery(mod, query, TZ, cipher)

/** Live or deleted rows alike, as `incluir_eliminados=true` states it (so that indexes serve it, db/record-indexes.ts). */
const ANY_DELETED = { $or: [{ _deleted: null }, { _deleted: { $ne: null } }] }
/** The conditions besides the implicit `_deleted: null` (or, with deleted records, ANY_DELETED). */
function filters (q: ListQuery): Array<Record<string, unknown>> {
  const all = '$and' in q.where ? q.where.$and as Array<Record<string, unknown>> : Object.keys(q.where).length === 0 ? [] : [q.where]
  return all.filter((c) => !('_deleted' in c) && JSON.stringify(c) !== JSON.stringify(ANY_DELETED))
}
const only = (query: Q, mod = vehiculos): Record<string, unknown> => {
  const f = filters(parse(query, mod))
  expect(f).toHaveLength(1)
  return f[0]!
}

/** Asserts a 400 DATOS_INVALIDOS whose detalles name `campo` (and match `mensaje` when given). */
function expectInvalid (query: Q, campo: string, mensaje?: RegExp, mod = vehiculos): void {
  let err: unknown
  try { parse(query, mod) } catch (e) { err = e }
  expect(err, `expected ${JSON.stringify(query)} to be rejected`).toBeInstanceOf(AppError)
  const e = err as AppError
  expect(e.code).toBe('DATOS_INVALIDOS')
  expect(e.statusCode).toBe(400)
  expect(e.message).toBe(ERRORS.DATOS_INVALIDOS.message)
  expect(e.detalles?.[0]?.campo).toBe(campo)
  if (mensaje !== undefined) expect(e.detalles?.[0]?.mensaje).toMatch(mensaje)
}

describe('defaults', () => {
  it('limit 100, offset 0, live records only, newest first with _id tie-break', () => {
    const q = parse({})
    expect(q).toEqual({
      where: { _deleted: null },
      search: [],
      orderBy: [{ _created: 'desc' }, { _id: 'desc' }],
      limit: 100,
      offset: 0,
      includeDeleted: false,
      filtersEncrypted: false,
      encryptedFields: [],
    })
  })

  it('echoes explicit limit and offset', () => {
    expect(parse({ limit: '7', offset: '14' })).toMatchObject({ limit: 7, offset: 14 })
    expect(parse({ limit: '1000' }).limit).toBe(1000)
    expect(parse({ limit: '1' }).limit).toBe(1)
  })

  it('clamps a limit above 1000 to 1000', () => {
    expect(parse({ limit: '5000' }).limit).toBe(1000)
    expect(parse({ limit: '1001' }).limit).toBe(1000)
  })

  it.each(['0', '-1', '1.5', 'abc', '', '1e3', ' 5'])('rejects limit=%j', (limit) => {
    expectInvalid({ limit }, 'limit')
  })

  it.each(['-1', '2.5', 'x', ''])('rejects offset=%j', (offset) => {
    expectInvalid({ offset }, 'offset')
  })

  it('rejects a repeated limit', () => {
    expectInvalid({ limit: ['5', '6'] }, 'limit')
  })
})

describe('sort', () => {
  it('ascending, descending and several keys, each followed by the _id tie-break', () => {
    expect(parse({ sort: 'km_actuales' }).orderBy).toEqual([{ km_actuales: 'asc' }, { _id: 'asc' }])
    expect(parse({ sort: '-fecha_itv,matricula' }).orderBy).toEqual([{ fecha_itv: 'desc' }, { matricula: 'asc' }, { _id: 'desc' }])
    expect(parse({ sort: '-_id' }).orderBy).toEqual([{ _id: 'desc' }])
    expect(parse({ sort: 'marca,_id' }).orderBy).toEqual([{ marca: 'asc' }, { _id: 'asc' }])
  })

  it('400 for an unknown sort field, with a hint', () => {
    expectInvalid({ sort: 'kilometros' }, 'sort', /kilometros/)
    expectInvalid({ sort: 'km_actuale' }, 'sort', /¿quería decir "km_actuales"/)
    expectInvalid({ sort: 'matricula,,marca' }, 'sort')
  })

  it('400 for sorting by an encrypted field (its stored order would leak nothing useful)', () => {
    expectInvalid({ sort: 'nif' }, 'sort', /nif/, personal)
    expectInvalid({ sort: '-fecha_nacimiento' }, 'sort', undefined, personal)
  })
})

describe('filters', () => {
  it('an unknown field is 400 with a "¿quería decir?" hint', () => {
    expectInvalid({ matriclua: 'X' }, 'matriclua', /¿quería decir "matricula"/)
    expectInvalid({ 'km_actual[gte]': '5' }, 'km_actual[gte]', /¿quería decir "km_actuales"/)
    expectInvalid({ zzzzzzzz: '1' }, 'zzzzzzzz', /desconocido/)
  })

  it('an unknown operator is 400', () => {
    expectInvalid({ 'km_actuales[mayor]': '5' }, 'km_actuales[mayor]', /operador/)
    expectInvalid({ 'matricula[like]': 'X' }, 'matricula[like]')
  })

  it('an operator that does not fit the type is 400', () => {
    expectInvalid({ 'km_actuales[contiene]': '5' }, 'km_actuales[contiene]')
    expectInvalid({ 'fecha_itv[contiene]': '2026' }, 'fecha_itv[contiene]')
    expectInvalid({ 'activo[gt]': 'true' }, 'activo[gt]', undefined, usuarios)
    expectInvalid({ 'activo[lte]': 'false' }, 'activo[lte]', undefined, usuarios)
  })

  it('values must fit the field type', () => {
    expectInvalid({ km_actuales: 'x' }, 'km_actuales', /entero/)
    expectInvalid({ 'km_actuales[gte]': '1.5' }, 'km_actuales[gte]')
    // Outside PostgreSQL's integer nothing can be stored: a mistake, not a miss.
    expectInvalid({ 'km_actuales[lt]': '2147483648' }, 'km_actuales[lt]', /entre -2147483648 y 2147483647/)
    expectInvalid({ _version: '9999999999' }, '_version', /entre/)
    expect(only({ 'km_actuales[gte]': '-2147483648' })).toEqual({ km_actuales: { $gte: -2147483648 } })
    expectInvalid({ fecha_itv: '2026-02-30' }, 'fecha_itv', /fecha/)
    expectInvalid({ fecha_itv: '15/03/2026' }, 'fecha_itv')
    expectInvalid({ activo: 'yes' }, 'activo', /true o false/, usuarios)
    expectInvalid({ estado: 'x'.repeat(501) }, 'estado')
    // 02:30 on the last Sunday of March does not exist in Madrid.
    expectInvalid({ '_created[gte]': '2026-03-29 02:30:00' }, '_created[gte]')
    expectInvalid({ _modified: '2026-13-01 10:00:00' }, '_modified')
  })

  it('plain equality and typed values', () => {
    expect(only({ marca: 'Seat' })).toEqual({ marca: 'Seat' })
    expect(only({ km_actuales: '1500' })).toEqual({ km_actuales: 1500 })
    expect(only({ fecha_itv: '2026-03-15' })).toEqual({ fecha_itv: '2026-03-15' })
    expect(only({ activo: 'false' }, usuarios)).toEqual({ activo: false })
    expect(only({ _created_by: 'USR-2026-00001' })).toEqual({ _created_by: 'USR-2026-00001' })
    expect(only({ _id: 'VEH-2026-00003' })).toEqual({ _id: 'VEH-2026-00003' })
  })

  it('several filters combine with AND beside _deleted: null', () => {
    const q = parse({ marca: 'Seat', estado: 'operativo' })
    expect(q.where).toEqual({ $and: [{ marca: 'Seat' }, { estado: 'operativo' }, { _deleted: null }] })
  })

  it('a repeated parameter means any of the values', () => {
    expect(only({ estado: ['operativo', 'taller'] })).toEqual({ estado: { $in: ['operativo', 'taller'] } })
    expect(only({ km_actuales: ['1', '2'] })).toEqual({ km_actuales: { $in: [1, 2] } })
  })

  it('[in] takes a comma list; [ne]; ranges with [gt] [gte] [lt] [lte]', () => {
    expect(only({ 'tipo[in]': 'moto,furgon' })).toEqual({ tipo: { $in: ['moto', 'furgon'] } })
    expect(only({ 'km_actuales[in]': '10,20' })).toEqual({ km_actuales: { $in: [10, 20] } })
    expectInvalid({ 'km_actuales[in]': '10,x' }, 'km_actuales[in]')
    // [ne] also matches records where the field is empty
    expect(only({ 'estado[ne]': 'baja' })).toEqual({ $or: [{ estado: { $ne: 'baja' } }, { estado: null }] })
    expect(only({ 'estado[ne]': ['baja', 'taller'] } as Q)).toEqual({ $or: [{ estado: { $nin: ['baja', 'taller'] } }, { estado: null }] })
    expect(only({ 'km_actuales[gt]': '100' })).toEqual({ km_actuales: { $gt: 100 } })
    expect(only({ 'km_actuales[lt]': '100' })).toEqual({ km_actuales: { $lt: 100 } })
    const range = filters(parse({ 'fecha_itv[gte]': '2026-01-01', 'fecha_itv[lte]': '2026-12-31' }))
    expect(range).toEqual([{ fecha_itv: { $gte: '2026-01-01' } }, { fecha_itv: { $lte: '2026-12-31' } }])
  })

  it('[contiene] on a string is a folded LIKE (its trigram index) with %, _ and \\ escaped', () => {
    expect(parse({ 'modelo[contiene]': 'ibi' }).search).toEqual([{ sql: 'search_fold("modelo") like search_fold(?)', params: ['%ibi%'] }])
    expect(parse({ 'modelo[contiene]': '50%_off\\' }).search[0]!.params).toEqual(['%50\\%\\_off\\\\%'])
    // on a text field too (not filterable otherwise), but not on an encrypted one
    const denuncias = registry.byName.get('denuncias')!
    expect(parse({ 'descripcion[contiene]': 'bici' }, denuncias).search).toEqual([{ sql: 'search_fold("descripcion") like search_fold(?)', params: ['%bici%'] }])
    expectInvalid({ descripcion: 'bici' }, 'descripcion', /no se aplica/, denuncias)
    expectInvalid({ sort: 'descripcion' }, 'sort', undefined, denuncias)
  })

  it('[contiene] on an enum field is the declared values that contain the text (its b-tree); on an id, ILIKE', () => {
    expect(only({ 'estado[contiene]': 'TALL' })).toEqual({ estado: { $in: ['taller'] } })
    expect(only({ 'estado[contiene]': 'zzz' })).toEqual({ estado: { $in: [] } })
    expect(only({ 'asignado_a[contiene]': '2026' })).toEqual({ asignado_a: { $ilike: '%2026%' } })
    const turnos = registry.byName.get('turnos')!
    expect(only({ 'tipo_turno[contiene]': 'MANANA' }, turnos)).toEqual({ tipo_turno: { $in: ['mañana'] } })
  })

  it('[vacio]: true or false, as conditions an index serves', () => {
    expect(only({ 'modelo[vacio]': 'true' })).toEqual({ $or: [{ modelo: null }, { modelo: '' }] })
    expect(only({ 'modelo[vacio]': 'false' })).toEqual({ modelo: { $gt: '' } })
    expect(only({ 'km_actuales[vacio]': 'true' })).toEqual({ km_actuales: null })
    expect(only({ 'asignado_a[vacio]': 'false' })).toEqual({ asignado_a: { $ne: null } })
    const blank = cipher.blindIndex('personal', 'nif', '')
    expect(only({ 'nif[vacio]': 'true' }, personal)).toEqual({ $or: [{ nif_bidx: null }, { nif_bidx: blank }] })
    expect(parse({ 'nif[vacio]': 'false' }, personal).filtersEncrypted).toBe(true)
    expect(parse({ 'formacion[vacio]': 'true' }, personal).search).toEqual([{ sql: 'coalesce(jsonb_array_length("formacion"), 0) = 0', params: [] }])
    expect(parse({ 'observaciones[vacio]': 'false' }, registry.byName.get('denuncias')!).search).toEqual([{ sql: 'coalesce(octet_length("observaciones"), 0) > 0', params: [] }])
    for (const v of ['', '1', 'TRUE', 'si']) expectInvalid({ 'modelo[vacio]': v }, 'modelo[vacio]', /true o false/)
    expectInvalid({ 'modelo[vacio]': ['true', 'false'] } as Q, 'modelo[vacio]')
    expectInvalid({ 'contacto_telefono[vacio]': 'true' }, 'contacto_telefono', /cifrado no buscable/, personal)
  })

  it('q: a prefix match through search_query, ranked first when there is no sort', () => {
    const q = parse({ q: 'robo bici' }, registry.byName.get('denuncias')!)
    expect(q.search).toHaveLength(1)
    // Matched against the stored document, whose expression folds the module's text fields.
    const doc = documentColumn(registry.byName.get('denuncias')!)!
    expect(q.search[0]!.sql).toBe(`"${doc.name}" @@ search_query(?)`)
    expect(doc.name).toMatch(/^_search_[0-9a-f]{8}$/)
    // The Spanish stems, and the words as written (for prefixes), of the same folded text.
    expect(doc.expression).toMatch(/^to_tsvector\('spanish'::regconfig, search_fold\(coalesce\("denunciante_nombre"::text, ''\) \|\| ' ' \|\| .*\)\) \|\| strip\(to_tsvector\('simple'::regconfig, search_fold\(coalesce\("denunciante_nombre"::text, ''\) \|\| /)
    expect(doc.expression).not.toMatch(/denunciante_dni/) // encrypted fields are not searched
    expect(q.search[0]!.params).toEqual(['robo bici'])
    expect(q.rank?.sql).toBe(`ts_rank("${doc.name}", search_query(?))`)
    expect(q.orderBy).toEqual([{ _created: 'desc' }, { _id: 'desc' }])
    expect(parse({ q: 'robo', sort: 'tipo' }, registry.byName.get('denuncias')!).rank).toBeUndefined()
    for (const v of ['', '  ', '¿?', 'x'.repeat(501)]) expectInvalid({ q: v }, 'q')
    expectInvalid({ q: ['a', 'b'] } as Q, 'q')
  })

  it('datetime values are read in the service time zone (or with their offset)', () => {
    expect(only({ '_created[gte]': '2026-06-01 12:00:00' })).toEqual({ _created: { $gte: new Date('2026-06-01T10:00:00Z') } })
    expect(only({ '_created[lt]': '2026-01-15 10:00:00' })).toEqual({ _created: { $lt: new Date('2026-01-15T09:00:00Z') } })
    expect(only({ _modified: '2026-06-01T10:00:00Z' })).toEqual({ _modified: new Date('2026-06-01T10:00:00Z') })
    const sanciones = registry.byName.get('sanciones')!
    expect(only({ 'fecha_infraccion[gte]': '2026-10-25 02:30:00' }, sanciones))
      .toEqual({ fecha_infraccion: { $gte: new Date('2026-10-25T00:30:00Z') } }) // the fold: earlier instant
  })
})

describe('encrypted fields', () => {
  it('a searchable field filters on its blind index and flags filtersEncrypted', () => {
    const q = parse({ nif: '12345678z ' }, personal)
    expect(q.filtersEncrypted).toBe(true)
    expect(filters(q)).toEqual([{ nif_bidx: cipher.blindIndex('personal', 'nif', '12345678Z') }])
    expect(JSON.stringify(q.where)).not.toContain('12345678')
    expect(only({ nif: ['1A', '2B'] }, personal)).toEqual({ nif_bidx: { $in: [cipher.blindIndex('personal', 'nif', '1A'), cipher.blindIndex('personal', 'nif', '2B')] } })
  })

  it('a blind index only supports equality', () => {
    expectInvalid({ 'nif[contiene]': '1234' }, 'nif[contiene]', undefined, personal)
    expectInvalid({ 'nif[gt]': '1234' }, 'nif[gt]', undefined, personal)
  })

  it('filtering on a non-searchable encrypted field is 400', () => {
    expectInvalid({ fecha_nacimiento: '1980-01-01' }, 'fecha_nacimiento', /cifrado/, personal)
    expectInvalid({ contacto_telefono: '600000000' }, 'contacto_telefono', undefined, personal)
  })

  it('plain filters leave filtersEncrypted false', () => {
    expect(parse({ nombre: 'Ana' }, personal).filtersEncrypted).toBe(false)
  })
})

describe('incluir_eliminados', () => {
  it('true drops the _deleted filter: live or deleted rows alike', () => {
    const q = parse({ incluir_eliminados: 'true' })
    expect(q.includeDeleted).toBe(true)
    expect(q.where).toEqual(ANY_DELETED)
    expect(filters(q)).toEqual([])
    expect(parse({ incluir_eliminados: 'true', marca: 'Seat' }).where).toEqual({ $and: [{ marca: 'Seat' }, ANY_DELETED] })
  })

  it('false is the default', () => {
    const q = parse({ incluir_eliminados: 'false' })
    expect(q.includeDeleted).toBe(false)
    expect(q.where).toEqual({ _deleted: null })
  })

  it.each(['1', 'yes', 'TRUE', ''])('rejects incluir_eliminados=%j', (v) => {
    expectInvalid({ incluir_eliminados: v }, 'incluir_eliminados')
  })
})
