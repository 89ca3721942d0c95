/**
 * modules.yaml: the real file loads into a frozen registry (docs/administrator-guide.md "modules.yaml reference"), and
 * every kind of mistake stops the start with a ConfigError naming the file,
 * the line and the key path, with a closest-name hint where one helps. Each
 * broken file is the real file with one edit, so line numbers are the real
 * file's lines.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadRegistry, parseRegistry } from '../../core/registry/load.js'
import { ConfigError } from '../../core/errors.js'
import { compileAccess } from '../../core/access.js'
import { ACTIONS } from '../../core/registry/types.js'
import { edit } from '../helpers/edit-text.js'

const FILE = 'modules.yaml'
const real = readFileSync(FILE, 'utf8')
const realLines = real.split('\n')

/** 1-based line of the first line of the real file containing `text` (after `after`). */
function lineOf (text: string, after = 0): number {
  const i = realLines.findIndex((l, n) => n + 1 > after && l.includes(text))
  if (i < 0) throw new Error(`"${text}" not in ${FILE}`)
  return i + 1
}

function errorOf (text: string): ConfigError {
  try {
    parseRegistry(text, 'temp.yaml')
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError, the registry loaded')
}

/** Asserts file:line, the key path and the text on one line of the message. */
function expectProblem (text: string, line: number, keyPath: string, ...parts: Array<string | RegExp>): void {
  const message = errorOf(text).message
  const row = message.split('\n').find((l) => l.includes(`temp.yaml:${line}: ${keyPath}:`))
  expect(row, message).toBeDefined()
  for (const p of parts) expect(row).toMatch(p)
}

describe('the real modules.yaml', () => {
  const registry = loadRegistry(FILE)

  it('declares the ten modules with the paths and prefixes of docs/administrator-guide.md', () => {
    expect(registry.modules.map((m) => [m.name, m.path, m.prefix, m.table])).toEqual([
      ['denuncias', 'denuncias', 'DEN', 'denuncias'],
      ['sanciones', 'sanciones', 'SAN', 'sanciones'],
      ['atestados', 'atestados', 'ATE', 'atestados'],
      ['personal', 'personal', 'PER', 'personal'],
      ['vehiculos', 'vehiculos', 'VEH', 'vehiculos'],
      ['sala092', 'sala092', '092', 'sala092'],
      ['turnos', 'turnos', 'TUR', 'turnos'],
      ['equipamiento', 'equipamiento', 'EQU', 'equipamiento'],
      ['usuarios', 'usuarios', 'USR', 'usuarios'],
      ['suscripciones', 'suscripciones', 'SUS', 'suscripciones'],
    ])
    expect(registry.subscriptionsModule?.name).toBe('suscripciones')
    expect(typeof registry.byName.get('sala092')!.prefix).toBe('string')
    expect(registry.usersModule.name).toBe('usuarios')
    expect([...registry.byPath.keys()]).toEqual(registry.modules.map((m) => m.path))
  })

  it('declares the state fields of docs/administrator-guide.md', () => {
    const states = Object.fromEntries(registry.modules.map((m) => [m.name, m.stateField ?? null]))
    expect(states).toEqual({
      denuncias: 'estado', sanciones: 'estado', atestados: null, personal: 'situacion', vehiculos: 'estado',
      sala092: 'estado', turnos: 'estado', equipamiento: 'estado', usuarios: null, suscripciones: null,
    })
  })

  it('keeps compañero as the JSON key and folds its column to companero', () => {
    const f = registry.byName.get('turnos')!.fieldMap.get('compañero')!
    expect(f).toMatchObject({ name: 'compañero', column: 'companero', type: 'ref', ref: 'personal' })
    expect(registry.byName.get('turnos')!.fields.map((x) => x.name)).toContain('compañero')
  })

  it('declares the required fields and defaults of docs/administrator-guide.md (samples)', () => {
    const den = registry.byName.get('denuncias')!.fieldMap
    expect(den.get('estado')).toMatchObject({ default: 'pendiente', required: false })
    expect(den.get('denunciante_dni')).toMatchObject({ encrypted: true, searchable: true, filterable: false })
    expect(registry.byName.get('sanciones')!.fieldMap.get('importe')).toMatchObject({ type: 'decimal', required: true, min: 0 })
    expect(registry.byName.get('sala092')!.fieldMap.get('fecha_hora_entrada')).toMatchObject({ type: 'datetime', default: 'now' })
    expect(registry.byName.get('personal')!.fieldMap.get('tip')).toMatchObject({ required: true, unique: true })
  })

  it('is frozen: registry, module list, modules, field lists and fields', () => {
    expect(Object.isFrozen(registry)).toBe(true)
    expect(Object.isFrozen(registry.modules)).toBe(true)
    expect(Object.isFrozen(registry.roles)).toBe(true)
    for (const m of registry.modules) {
      expect(Object.isFrozen(m), m.name).toBe(true)
      expect(Object.isFrozen(m.fields), m.name).toBe(true)
      expect(Object.isFrozen(m.transitions), m.name).toBe(true)
      for (const f of m.fields) expect(Object.isFrozen(f), `${m.name}.${f.name}`).toBe(true)
    }
    expect(() => { (registry.modules as unknown as unknown[]).push({}) }).toThrow(TypeError)
  })

  it('parses the same text to the same registry through parseRegistry', () => {
    const again = parseRegistry(real, 'temp.yaml')
    expect(again.file).toBe('temp.yaml')
    expect(again.modules.map((m) => m.fields.length)).toEqual(registry.modules.map((m) => m.fields.length))
  })

  it('a missing file is a ConfigError naming it', () => {
    expect(() => loadRegistry('/nonexistent/modules.yaml')).toThrow(ConfigError)
    expect(() => loadRegistry('/nonexistent/modules.yaml')).toThrow(/\/nonexistent\/modules\.yaml/)
  })
})

describe('row-level scope in the real modules.yaml', () => {
  const registry = loadRegistry(FILE)
  const access = compileAccess(registry)

  it('declares the default owner fields', () => {
    expect(Object.fromEntries(registry.modules.map((m) => [m.name, [...(m.ownedById ? ['_id'] : []), ...m.ownerFields.map((f) => f.name)]]))).toEqual({
      denuncias: ['agente_asignado'], sanciones: ['agente_denunciante'], atestados: [], personal: ['_id'], vehiculos: ['asignado_a'],
      sala092: [], turnos: ['agente_id', 'compañero'], equipamiento: ['asignado_a'], usuarios: [], suscripciones: [],
    })
    expect(registry.staffModule?.name).toBe('personal')
  })

  it('limits the agente\'s ver, and its editar and descifrar where it records, and the oficial\'s editar and descifrar to own records, and nobody else', () => {
    const scoped = registry.roles.flatMap((r) => registry.modules.flatMap((m) => ACTIONS.filter((a) => access.scope(r.name, m.name, a) === 'own').map((a) => `${r.name} ${m.name}.${a}`)))
    expect(scoped.sort()).toEqual([
      ...['denuncias', 'sanciones', 'sala092', 'turnos', 'vehiculos', 'equipamiento'].map((m) => `agente ${m}.ver`),
      ...['denuncias', 'sanciones', 'sala092'].flatMap((m) => [`agente ${m}.descifrar`, `agente ${m}.editar`]),
      ...['denuncias', 'sanciones', 'atestados', 'sala092'].flatMap((m) => [`oficial ${m}.descifrar`, `oficial ${m}.editar`]),
    ].sort())
    expect(access.scope('agente', 'personal', 'ver')).toBe('all')
    expect(access.scope('oficial', 'denuncias', 'ver')).toBe('all')
    expect(access.scope('agente', 'denuncias', 'crear')).toBe('all')
    expect(access.scope('agente', 'denuncias', 'eliminar')).toBe('none')
    expect(access.scope('agente', 'atestados', 'editar')).toBe('none')
    expect(access.scope('agente', 'personal', 'descifrar')).toBe('none')
    expect(access.scope('consulta', 'denuncias', 'editar')).toBe('none')
  })
})

describe('mistakes in modules.yaml', () => {
  it('the subscriptions module: a field the deliverer reads, missing or of another type; a second such module', () => {
    expect(errorOf(edit(real, "      filtro: { type: string, max_length: 2000,", "      filtrox: { type: string, max_length: 2000,")).message).toMatch(/modules\.suscripciones: the subscriptions module must declare "filtro" as a string/)
    expect(errorOf(edit(real, '      activa: { type: boolean, default: true,', '      activa: { type: string,')).message).toMatch(/modules\.suscripciones\.fields\.activa: the subscriptions module must declare "activa" as a boolean/)
    expect(errorOf(edit(real, '    users: true\n', '    users: true\n    subscriptions: true\n')).message).toMatch(/only one module may set "subscriptions: true"/)
  })

  it('a misspelt field key, with the hint "type"', () => {
    const l = lineOf('denunciante_nombre: { type: string')
    expectProblem(edit(real, 'denunciante_nombre: { type: string', 'denunciante_nombre: { tpye: string'),
      l, 'modules.denuncias.fields.denunciante_nombre.tpye', 'unknown key "tpye"', 'did you mean "type"')
  })

  it('a misspelt module key, with the hint "prefix"', () => {
    const l = lineOf('    prefix: DEN')
    expectProblem(edit(real, '    prefix: DEN\n', '    prefx: DEN\n'), l, 'modules.denuncias.prefx', 'unknown key "prefx"', 'did you mean "prefix"')
  })

  it('an unknown field type, with a hint', () => {
    const l = lineOf('km_actuales:')
    expectProblem(edit(real, 'km_actuales: { type: integer', 'km_actuales: { type: integr'),
      l, 'modules.vehiculos.fields.km_actuales.type', '"integr" is not one of', 'did you mean "integer"')
  })

  it('a ref to an unknown module, with a hint', () => {
    const l = lineOf('agente_asignado: { type: ref')
    expectProblem(edit(real, 'agente_asignado: { type: ref, ref: personal,', 'agente_asignado: { type: ref, ref: persona,'),
      l, 'modules.denuncias.fields.agente_asignado.ref', 'unknown module "persona"', 'did you mean "personal"')
  })

  it('a permission naming an unknown module, with a hint', () => {
    const l = lineOf('      - turnos.*')
    expectProblem(edit(real, '      - turnos.*\n      - equipamiento.*', '      - turno.*\n      - equipamiento.*'),
      l, 'roles.administrador.permissions.6', 'unknown module "turno"', 'did you mean "turnos"')
  })

  it('a permission naming an unknown action, with a hint', () => {
    const l = lineOf('      - usuarios.ver')
    expectProblem(edit(real, '      - usuarios.ver\n', '      - usuarios.verr\n'),
      l, 'roles.jefe.permissions.42', 'unknown action "verr"', 'did you mean "ver"')
  })

  it('a duplicate prefix', () => {
    const l = lineOf('    prefix: SAN')
    expectProblem(edit(real, '    prefix: SAN\n', '    prefix: DEN\n'), l, 'modules.sanciones.prefix', 'prefix "DEN" is already used by module "denuncias"')
  })

  it('a duplicate path', () => {
    const l = lineOf('    prefix: SAN') + 1
    expectProblem(edit(real, '    prefix: SAN\n', '    prefix: SAN\n    path: denuncias\n'), l, 'modules.sanciones.path', 'path "denuncias" is already used by module "denuncias"')
  })

  it('a path reserved by the service (auth)', () => {
    const l = lineOf('    prefix: ATE') + 1
    expectProblem(edit(real, '    prefix: ATE\n', '    prefix: ATE\n    path: auth\n'), l, 'modules.atestados.path', 'path "auth" is reserved')
  })

  it('a state_field that is not an enum field', () => {
    const l = lineOf('    state_field: situacion')
    expectProblem(edit(real, '    state_field: situacion\n', '    state_field: nombre\n'), l, 'modules.personal.state_field', 'the state field "nombre" must declare enum values')
  })

  it('a state_field naming no field, with a hint', () => {
    const l = lineOf('    state_field: situacion')
    expectProblem(edit(real, '    state_field: situacion\n', '    state_field: situacio\n'), l, 'modules.personal.state_field', 'unknown field "situacio"', 'did you mean "situacion"')
  })

  it('a transition naming an unknown state, with a hint', () => {
    const l = lineOf('{ from: investigacion, to: judicializada }')
    expectProblem(edit(real, '{ from: investigacion, to: judicializada }', '{ from: investigacion, to: judicializado }'),
      l, 'modules.denuncias.transitions.3', '"judicializado" is not a state of estado', 'did you mean "judicializada"')
  })

  it('a transition requiring an unknown field, with a hint', () => {
    const l = lineOf('requires: [fecha_pago]')
    expectProblem(edit(real, 'requires: [fecha_pago]', 'requires: [fecha_pgo]'), l, 'modules.sanciones.transitions.4.requires', 'unknown field "fecha_pgo"', 'did you mean "fecha_pago"')
  })

  it('a printed copy leaving out an unknown field, with a hint; or with an unknown key', () => {
    const l = lineOf('    documento: { excluir: [observaciones] }')
    expectProblem(edit(real, 'documento: { excluir: [observaciones] }', 'documento: { excluir: [observacione] }'), l, 'modules.denuncias.documento.excluir.0', 'unknown field "observacione"', 'did you mean "observaciones"')
    expectProblem(edit(real, 'documento: { excluir: [observaciones] }', 'documento: { exluir: [observaciones] }'), l, 'modules.denuncias.documento.exluir', 'unknown key "exluir"', 'did you mean "excluir"')
  })

  it('searchable without encrypted', () => {
    const l = lineOf('infractor_dni:')
    expectProblem(edit(real, 'infractor_dni: { type: string, format: dni, max_length: 20, encrypted: true, searchable: true,', 'infractor_dni: { type: string, format: dni, max_length: 20, searchable: true,'),
      l, 'modules.sanciones.fields.infractor_dni.searchable', 'only encrypted fields are searchable')
  })

  it('an unknown format, with a hint; a format on a field that is not a string, or with a pattern or enum; a default that does not fit it', () => {
    const l = lineOf('infractor_dni:')
    const dni = 'infractor_dni: { type: string, format: dni,'
    expectProblem(edit(real, dni, 'infractor_dni: { type: string, format: dnii,'), l, 'modules.sanciones.fields.infractor_dni.format', 'unknown format "dnii" (did you mean "dni"?); formats are dni, euros, telefono')
    expectProblem(edit(real, dni, 'infractor_dni: { type: text, format: dni,'), l, 'modules.sanciones.fields.infractor_dni.format', 'format dni is for string fields (this one is text)')
    expectProblem(edit(real, dni, `${dni} pattern: '[0-9]+',`), l, 'modules.sanciones.fields.infractor_dni.format', 'a field with a format takes no pattern')
    expectProblem(edit(real, dni, `${dni} default: 12345678A,`), l, 'modules.sanciones.fields.infractor_dni.default', 'default "12345678A" does not fit format dni: letra de control incorrecta')
    expect(parseRegistry(edit(real, dni, `${dni} default: 12345678Z,`), 'temp.yaml').byName.get('sanciones')!.fieldMap.get('infractor_dni')!.format).toBe('dni')
  })

  it('structured array items (docs/administrator-guide.md "modules.yaml reference"): misspelt keys and types with hints, keys only arrays take, formats', () => {
    const dni = '          dni: { type: string, format: dni, max_length: 20, encrypted: true, searchable: true, label: DNI }'
    const l = lineOf(dni)
    const at = 'modules.denuncias.fields.testigos.items.dni'
    expectProblem(edit(real, dni, '          dni: { type: string, format: dni, max_length: 20, encrypetd: true }'), l, `${at}.encrypetd`, 'unknown key "encrypetd"', 'did you mean "encrypted"')
    expectProblem(edit(real, dni, '          dni: { type: strng, encrypted: true }'), l, `${at}.type`, '"strng" is not one of string, text, integer, decimal, boolean, date, datetime, time', 'did you mean "string"')
    expectProblem(edit(real, dni, '          dni: { type: array }'), l, `${at}.type`, '"array" is not one of')
    expectProblem(edit(real, dni, '          dni: { type: string, searchable: true }'), l, `${at}.searchable`, 'only encrypted fields are searchable through a blind index')
    expectProblem(edit(real, dni, '          dni: { type: string, unique: true }'), l, `${at}.unique`, 'unknown key "unique"')
    expectProblem(edit(real, dni, '          dni: { type: string, format: dnni, encrypted: true }'), l, `${at}.format`, 'unknown format "dnni" (did you mean "dni"?)')
    expectProblem(edit(real, dni, '          dni: { type: integer, format: dni }'), l, `${at}.format`, 'format dni is for string fields (this one is integer)')
    expectProblem(edit(real, dni, '          dni: { type: integer, max_length: 3 }'), l, `${at}.max_length`, 'not allowed on a integer field')
    expectProblem(edit(real, '        type: array\n        max_items: 50\n', '        type: array\n        encrypted: true\n'), lineOf('        type: array') + 1, 'modules.denuncias.fields.testigos.encrypted', 'set "encrypted: true" on the sub-fields')
    expectProblem(edit(real, '        type: array\n        max_items: 50\n', '        type: text\n'), lineOf('        items:') - 1, 'modules.denuncias.fields.testigos.items', 'only array fields declare items (this one is text)')
    const testigos = parseRegistry(real, 'temp.yaml').byName.get('denuncias')!.fieldMap.get('testigos')!
    expect(testigos.items!.map((s) => [s.name, s.type, s.required, s.encrypted, s.format ?? null])).toEqual([
      ['nombre', 'string', true, false, null], ['dni', 'string', false, true, 'dni'], ['telefono', 'string', false, true, null],
      ['domicilio', 'string', false, true, null], ['declaracion', 'text', false, false, null],
    ])
  })

  it('a default that is not one of the enum values, with a hint', () => {
    const l = lineOf('default: operativo')
    expectProblem(edit(real, 'default: operativo', 'default: operatiov'), l, 'modules.vehiculos.fields.estado.default', 'default "operatiov" is not one of', 'did you mean "operativo"')
  })

  it('no users module', () => {
    const l = lineOf('modules:')
    expectProblem(edit(real, '    users: true\n', ''), l, 'modules', 'exactly one module must set "users: true" (found 0)')
  })

  it('enum on a non-string field', () => {
    const l = lineOf('km_actuales:')
    expectProblem(edit(real, 'km_actuales: { type: integer, min: 0, indexed: true,', 'km_actuales: { type: integer, min: 0, indexed: true, enum: [a, b],'),
      l, 'modules.vehiculos.fields.km_actuales.enum', 'only string fields may declare enum values')
  })

  it('a YAML syntax error, with its line', () => {
    const l = lineOf('      modelo: { type: string, label: Modelo }', lineOf('  vehiculos:'))
    const message = errorOf(edit(real, '      marca: { type: string, label: Marca }\n      modelo: { type: string, label: Modelo }\n      tipo: { type: string, required: true, enum: [patrulla',
      '      marca: { type: string, label: Marca }\n     modelo: { type: string }\n      tipo: { type: string, required: true, enum: [patrulla')).message
    expect(message).toMatch(/YAML syntax error/)
    expect(message).toContain(`temp.yaml:${l}:`)
  })

  it('YAML syntax errors name file, line and column, in the style of schema errors', () => {
    const l = lineOf('      modelo: { type: string, label: Modelo }', lineOf('  vehiculos:'))
    const indent = errorOf(edit(real, '      modelo: { type: string, label: Modelo }\n      tipo: { type: string, required: true, enum: [patrulla', '     modelo: { type: string, label: Modelo }\n      tipo: { type: string, required: true, enum: [patrulla')).message
    expect(indent).toBe(`temp.yaml is not valid:\n  temp.yaml:${l}:6: YAML syntax error: All mapping items must start at the same column`)
    const tab = errorOf(edit(real, '      modelo: { type: string, label: Modelo }\n      tipo: { type: string, required: true, enum: [patrulla', '\tmodelo: x\n      tipo: { type: string, required: true, enum: [patrulla')).message
    expect(tab).toMatch(new RegExp(`^temp\\.yaml is not valid:\n  temp\\.yaml:${l}:1: YAML syntax error: Tabs are not allowed`))
  })

  it('a duplicated key is refused', () => {
    const message = errorOf(edit(real, '      juzgado: { type: string, label: Juzgado }\n', '      juzgado: { type: string, label: Juzgado }\n      juzgado: { type: text }\n')).message
    expect(message).toMatch(/^temp\.yaml/)
    expect(message).toMatch(/unique/i)
  })

  it('a file that is not a mapping', () => {
    expect(errorOf('- just\n- a list\n').message).toMatch(/temp\.yaml:1: \(top level\): expected object/)
    expect(errorOf('').message).toMatch(/temp\.yaml: the file must hold a mapping/)
  })

  it('row-level scope: a limit other than :propios, crear:propios, importar:propios, and owner fields that are no staff ref', () => {
    // The oficial's line (the agente's has the same text; the oficial's is followed by an unlimited sanciones.ver).
    const rest = '\n      - denuncias.descifrar:propios\n      - sanciones.ver\n'
    const oficial = (to: string): string => edit(real, `      - denuncias.editar:propios${rest}`, `${to}${rest}`)
    const p = lineOf('      - denuncias.editar:propios', lineOf('  oficial:'))
    expect(p).toBeLessThan(lineOf('  agente:'))
    expectProblem(oficial('      - denuncias.editar:propio'), p, 'roles.oficial.permissions.2', 'unknown limit ":propio"', 'did you mean "propios"')
    const c = lineOf('      - denuncias.crear', lineOf('  oficial:'))
    expectProblem(oficial('      - denuncias.crear:propios'), c + 1, 'roles.oficial.permissions.2', 'crear cannot be limited to own records')
    expectProblem(oficial('      - denuncias.importar:propios'), c + 1, 'roles.oficial.permissions.2', 'importar cannot be limited to own records')
    const o = lineOf('    owner_fields: [agente_asignado]')
    expectProblem(edit(real, '    owner_fields: [agente_asignado]', '    owner_fields: [agente_asignao]'), o, 'modules.denuncias.owner_fields.0', 'unknown field "agente_asignao"', 'did you mean "agente_asignado"')
    expectProblem(edit(real, '    owner_fields: [agente_asignado]', '    owner_fields: [lugar_hechos]'), o, 'modules.denuncias.owner_fields.0', 'must be of type ref with "ref: personal"')
    expectProblem(edit(real, '    owner_fields: [agente_asignado]', '    owner_fields: [_id]'), o, 'modules.denuncias.owner_fields.0', '"_id" is an owner field only in module "personal"')
    const withoutLink = edit(real, '      personal_id: { type: ref, ref: personal,', '      legajo: { type: string,')
    expect(errorOf(withoutLink).message).toMatch(/owner fields need a "personal_id" field of type ref in the users module/)
  })

  it('the default of a time field is HH:MM ("now" is the clock only for dates and date-times)', () => {
    const l = lineOf('      hora_inicio: { type: time,')
    expectProblem(edit(real, '      hora_inicio: { type: time,', '      hora_inicio: { type: time, default: now,'), l, 'modules.turnos.fields.hora_inicio.default', 'the default of a time field is HH:MM')
    expect(parseRegistry(edit(real, '      hora_inicio: { type: time,', "      hora_inicio: { type: time, default: '08:00',"), 'temp.yaml').byName.get('turnos')!.fieldMap.get('hora_inicio')!.default).toBe('08:00')
  })
})
