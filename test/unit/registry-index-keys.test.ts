/**
 * What modules.yaml asks to index (docs/administrator-guide.md "Indexes"):
 * `indexed`, `contains_index` and a module's `full_text`, what a field's
 * role implies, and every misuse stopped at load with the file, the line,
 * the key path and a closest-name hint where one helps.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadRegistry, parseRegistry } from '../../core/registry/load.js'
import { ConfigError } from '../../core/errors.js'
import { unindexedSearches } from '../../core/registry/index-report.js'
import { edit } from '../helpers/edit-text.js'

const real = readFileSync('modules.yaml', 'utf8')
const lines = real.split('\n')
const lineOf = (text: string): number => lines.findIndex((l) => l.includes(text)) + 1

function expectProblem (text: string, line: number, keyPath: string, ...parts: string[]): void {
  let message = ''
  try { parseRegistry(text, 'temp.yaml') } catch (err) { expect(err).toBeInstanceOf(ConfigError); message = (err as Error).message }
  const row = message.split('\n').find((l) => l.includes(`temp.yaml:${line}: ${keyPath}:`))
  expect(row, message).toBeDefined()
  for (const p of parts) expect(row).toContain(p)
}

const field = (mod: string, name: string) => loadRegistry('modules.yaml').byName.get(mod)!.fieldMap.get(name)!

describe('what is indexed', () => {
  it('by role: state, owner, ref, unique, enum, date and date-time fields; declared ones; nothing else', () => {
    expect(field('sanciones', 'estado').indexed).toBe(true) // state field
    expect(field('sanciones', 'agente_denunciante').indexed).toBe(true) // owner field, ref
    expect(field('turnos', 'vehiculo_asignado').indexed).toBe(true) // ref
    expect(field('vehiculos', 'matricula').indexed).toBe(true) // unique
    expect(field('sanciones', 'tipo').indexed).toBe(true) // enum
    expect(field('sanciones', 'fecha_pago').indexed).toBe(true) // date
    expect(field('sanciones', 'fecha_infraccion').indexed).toBe(true) // date-time
    expect(field('sanciones', 'expediente').indexed).toBe(true) // declared
    // Filterable without an index: numbers, booleans, times, strings nobody declared; text and arrays without `indexed`.
    for (const [m, f] of [['sanciones', 'importe'], ['sanciones', 'puntos_carnet'], ['turnos', 'hora_inicio'], ['vehiculos', 'modelo'], ['usuarios', 'activo']] as const) {
      expect(field(m, f), `${m}.${f}`).toMatchObject({ filterable: true, indexed: false })
    }
    expect(field('sanciones', 'infraccion_descripcion')).toMatchObject({ indexed: false, containsIndex: false })
    // Encrypted fields are found through their blind index, never `indexed`.
    expect(field('denuncias', 'denunciante_dni').indexed).toBe(false)
    expect(field('denuncias', 'descripcion').containsIndex).toBe(true)
  })

  it('`indexed: false` turns off what an enum, a date or a ref implies', () => {
    const reg = parseRegistry(edit(real, 'fecha_pago: { type: date,', 'fecha_pago: { type: date, indexed: false,'), 'temp.yaml')
    expect(reg.byName.get('sanciones')!.fieldMap.get('fecha_pago')!.indexed).toBe(false)
  })

  it('system fields: `_created_by`, `_modified`, `_modified_by` keep their index unless `system_fields` leaves it out', () => {
    const reg = loadRegistry('modules.yaml')
    for (const m of reg.modules) expect(m.indexedSystemFields, m.name).toEqual(['_created_by', '_modified', '_modified_by'])
    const USERS = '    users: true\n'
    const lean = parseRegistry(edit(real, USERS, `${USERS}    system_fields: { _created_by: { indexed: false }, _modified_by: { indexed: false }, _modified: { indexed: true } }\n`), 'temp.yaml')
    const usuarios = lean.byName.get('usuarios')!
    expect(usuarios.indexedSystemFields).toEqual(['_modified'])
    // npm run check names them among the filters no index serves.
    expect(unindexedSearches(usuarios).filters.slice(0, 2)).toEqual(['_created_by', '_modified_by'])
    expect(unindexedSearches(reg.byName.get('usuarios')!).filters).not.toContain('_created_by')
  })

  it('q covers `full_text`, by default the module\'s text fields', () => {
    const reg = loadRegistry('modules.yaml')
    expect(reg.byName.get('denuncias')!.fullText.map((f) => f.name)).toEqual(['denunciante_nombre', 'tipo', 'lugar_hechos', 'descripcion', 'observaciones'])
    // turnos without its list has no text field: nothing for q.
    const turnos = parseRegistry(edit(real, '    full_text: [tipo_turno, servicio]\n', ''), 'temp.yaml')
    expect(turnos.byName.get('turnos')!.fullText).toEqual([])
    expect(reg.byName.get('atestados')!.fullText.map((f) => f.name)).toEqual(['juzgado'])
    const noList = parseRegistry(edit(real, '    full_text: [nombre, marca, modelo, ubicacion, observaciones]\n', ''), 'temp.yaml')
    expect(noList.byName.get('equipamiento')!.fullText.map((f) => f.name)).toEqual(['observaciones'])
  })
})

describe('mistakes', () => {
  it('a misspelt key, with the closest name', () => {
    const l = lineOf('      km_actuales:')
    expectProblem(edit(real, 'km_actuales: { type: integer, min: 0, indexed: true,', 'km_actuales: { type: integer, min: 0, indexd: true,'),
      l, 'modules.vehiculos.fields.km_actuales.indexd', 'unknown key "indexd"', 'did you mean "indexed"')
    expectProblem(edit(real, 'km_actuales: { type: integer, min: 0, indexed: true,', 'km_actuales: { type: integer, min: 0, contains_indx: true,'),
      l, 'modules.vehiculos.fields.km_actuales.contains_indx', 'did you mean "contains_index"')
    const m = lineOf('    full_text: [matricula, marca]')
    expectProblem(edit(real, '    full_text: [matricula, marca]', '    full_txt: [matricula, marca]'),
      m, 'modules.vehiculos.full_txt', 'did you mean "full_text"')
  })

  it('indexed on an encrypted field, or one that is not filterable', () => {
    const l = lineOf('      denunciante_telefono:')
    expectProblem(edit(real, 'denunciante_telefono: { type: string, max_length: 30, encrypted: true,', 'denunciante_telefono: { type: string, max_length: 30, encrypted: true, indexed: true,'),
      l, 'modules.denuncias.fields.denunciante_telefono.indexed', 'encrypted fields are indexed through "searchable"')
    const m = lineOf('      operador:')
    expectProblem(edit(real, 'operador: { type: string, indexed: true,', 'operador: { type: string, filterable: false, indexed: true,'),
      m, 'modules.sala092.fields.operador.indexed', 'takes no filter to index')
  })

  it('indexed: false where the role needs the index', () => {
    const l = lineOf('      estado: { type: string, enum: [operativo, taller, baja], default: operativo,')
    expectProblem(edit(real, 'estado: { type: string, enum: [operativo, taller, baja], default: operativo,', 'estado: { type: string, enum: [operativo, taller, baja], default: operativo, indexed: false,'),
      l, 'modules.vehiculos.fields.estado.indexed', '"indexed: false" is not allowed on the state field')
    const m = lineOf('      asignado_a: { type: ref, ref: personal,')
    expectProblem(edit(real, '      asignado_a: { type: ref, ref: personal, label: Asignado a }\n\n  sala092', '      asignado_a: { type: ref, ref: personal, indexed: false }\n\n  sala092'),
      m, 'modules.vehiculos.fields.asignado_a.indexed', 'an owner field')
  })

  it('system_fields: an unknown or misspelt one, and _created_by where a role limits the module to own records', () => {
    const SALA = '    full_text: [categoria, descripcion, ubicacion, operador, resultado]\n'
    const l = lineOf(SALA.trimEnd()) + 1
    expectProblem(edit(real, SALA, `${SALA}    system_fields: { _modifed: { indexed: false } }\n`),
      l, 'modules.sala092.system_fields._modifed', 'did you mean "_modified"')
    expectProblem(edit(real, SALA, `${SALA}    system_fields: { _id: { indexed: false } }\n`),
      l, 'modules.sala092.system_fields._id', 'unknown key "_id"')
    expectProblem(edit(real, SALA, `${SALA}    system_fields: { _created_by: { indexed: false } }\n`),
      l, 'modules.sala092.system_fields._created_by.indexed', 'limits sala092.', 'to own records', 'every "propios" scope reads _created_by')
  })

  it('contains_index on a type without contiene, an enum, an encrypted field', () => {
    const l = lineOf('      km_actuales:')
    expectProblem(edit(real, 'km_actuales: { type: integer, min: 0, indexed: true,', 'km_actuales: { type: integer, min: 0, contains_index: true,'),
      l, 'modules.vehiculos.fields.km_actuales.contains_index', 'only string and text fields take contiene (this one is integer)')
    const e = lineOf('      tipo: { type: string, required: true, enum: [patrulla')
    expectProblem(edit(real, 'enum: [patrulla, moto, furgon, todoterreno],', 'enum: [patrulla, moto, furgon, todoterreno], contains_index: true,'),
      e, 'modules.vehiculos.fields.tipo.contains_index', 'served by its own index')
    const c = lineOf('      denunciante_telefono:')
    expectProblem(edit(real, 'denunciante_telefono: { type: string, max_length: 30, encrypted: true,', 'denunciante_telefono: { type: string, max_length: 30, encrypted: true, contains_index: true,'),
      c, 'modules.denuncias.fields.denunciante_telefono.contains_index', 'encrypted fields are searched through "searchable"')
  })

  it('full_text naming an unknown, encrypted or non-text field', () => {
    const l = lineOf('    full_text: [matricula, marca]')
    expectProblem(edit(real, '    full_text: [matricula, marca]', '    full_text: [matricula, marka]'),
      l, 'modules.vehiculos.full_text.1', 'unknown field "marka"', 'did you mean "marca"')
    expectProblem(edit(real, '    full_text: [matricula, marca]', '    full_text: [matricula, km_actuales]'),
      l, 'modules.vehiculos.full_text.1', '"km_actuales" is a integer field; full_text takes string and text fields')
    const d = lineOf('    full_text: [denunciante_nombre')
    expectProblem(edit(real, 'full_text: [denunciante_nombre, tipo', 'full_text: [denunciante_domicilio, tipo'),
      d, 'modules.denuncias.full_text.0', '"denunciante_domicilio" is encrypted')
  })
})
