/**
 * modules.yaml's personal-data keys (docs/administrator-guide.md "Personal
 * data"; SPEC S27): `personal: true` on fields and sub-fields, a module's
 * `conservacion`, a role's `proteccion_datos`. The real file declares them;
 * each mistake stops the start with the file, the line, the key path and a
 * closest-name hint. Broken files are the real file with one edit.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadRegistry, parseRegistry } from '../../core/registry/load.js'
import { ConfigError } from '../../core/errors.js'
import { edit } from '../helpers/edit-text.js'

const FILE = 'modules.yaml'
const real = readFileSync(FILE, 'utf8')
const lines = real.split('\n')
const lineOf = (text: string): number => {
  const i = lines.findIndex((l) => l.includes(text))
  if (i < 0) throw new Error(`"${text}" not in ${FILE}`)
  return i + 1
}

function expectProblem (text: string, line: number, keyPath: string, ...parts: string[]): void {
  let message = ''
  try {
    parseRegistry(text, 'temp.yaml')
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    message = (err as Error).message
  }
  const row = message.split('\n').find((l) => l.includes(`temp.yaml:${line}: ${keyPath}:`))
  expect(row, message || 'the registry loaded').toBeDefined()
  for (const p of parts) expect(row).toContain(p)
}

describe('the real modules.yaml', () => {
  const registry = loadRegistry(FILE)

  it('marks personal data: fields declared personal, every encrypted one, sub-fields alike; an encrypted file is evidence, not personal', () => {
    const denuncias = registry.byName.get('denuncias')!
    expect(denuncias.fields.filter((f) => f.personal).map((f) => f.name)).toEqual(['denunciante_nombre', 'denunciante_dni', 'denunciante_telefono', 'denunciante_email', 'denunciante_domicilio'])
    expect(denuncias.fieldMap.get('testigos')!.items!.filter((f) => f.personal).map((f) => f.name)).toEqual(['nombre', 'dni', 'telefono', 'domicilio', 'declaracion'])
    const atestados = registry.byName.get('atestados')!
    expect(atestados.fields.filter((f) => f.personal).map((f) => f.name)).toEqual(['imputados', 'victimas'])
  })

  it('lets the officer block records only of modules holding personal data', () => {
    const blockable = registry.modules.filter((m) => m.personalData).map((m) => m.name)
    expect(blockable).toEqual(expect.arrayContaining(['denuncias', 'sanciones', 'atestados', 'sala092']))
    expect(blockable).not.toContain('vehiculos')
  })

  it('declares conservacion on denuncias, sanciones and sala092, and the data-protection officer', () => {
    expect(registry.byName.get('denuncias')!.retention).toEqual({ years: 5, from: 'fecha_hechos', states: ['archivada', 'judicializada'] })
    expect(registry.byName.get('sanciones')!.retention).toEqual({ years: 5, from: '_created', states: ['cobrada', 'anulada'] })
    expect(registry.byName.get('sala092')!.retention).toEqual({ years: 2, from: 'fecha_hora_entrada', states: ['resuelta'] })
    expect(registry.byName.get('personal')!.retention).toBeUndefined()
    expect(registry.roles.filter((r) => r.dataProtection).map((r) => r.name)).toEqual(['delegado_proteccion_datos'])
    expect(registry.usersModule.fieldMap.get('rol')!.enum).toContain('delegado_proteccion_datos')
  })
})

describe('mistakes', () => {
  const retention = 'conservacion: { años: 5, desde: fecha_hechos, estados: [archivada, judicializada] }'
  const l = lineOf(retention)

  it('conservacion counting from an unknown field, or from one that is no date, with a hint', () => {
    expectProblem(edit(real, retention, 'conservacion: { años: 5, desde: fecha_hecho }'), l, 'modules.denuncias.conservacion.desde', 'unknown field "fecha_hecho"', 'did you mean "fecha_hechos"')
    expectProblem(edit(real, retention, 'conservacion: { años: 5, desde: tipo }'), l, 'modules.denuncias.conservacion.desde', '"tipo" is a string field; "desde" is a date or datetime field, or _created')
  })

  it('conservacion counting from an encrypted date, which the daily review cannot compare', () => {
    const fecha = '      fecha_hechos: { type: datetime, required: true,'
    expectProblem(edit(real, fecha, '      fecha_hechos: { type: datetime, encrypted: true, required: true,'), l, 'modules.denuncias.conservacion.desde', '"fecha_hechos" is encrypted', 'name a plain date field, or _created')
  })

  it('conservacion naming a state the module does not have, or states without a state field', () => {
    expectProblem(edit(real, retention, 'conservacion: { años: 5, estados: [archivda] }'), l, 'modules.denuncias.conservacion.estados.0', '"archivda" is not a state of estado', 'did you mean "archivada"')
    const atestados = '    full_text: [juzgado]\n'
    expectProblem(edit(real, atestados, `${atestados}    conservacion: { años: 10, estados: [cerrado] }\n`), lineOf('    full_text: [juzgado]') + 1, 'modules.atestados.conservacion.estados', 'needs the module\'s "state_field"')
  })

  it('conservacion with a misspelt key, or years out of range', () => {
    expectProblem(edit(real, retention, 'conservacion: { anos: 5 }'), l, 'modules.denuncias.conservacion.anos', 'unknown key "anos"', 'did you mean "años"')
    expectProblem(edit(real, retention, 'conservacion: { años: 0 }'), l, 'modules.denuncias.conservacion.años')
  })

  it('personal on a password or on a structured array itself; a misspelt proteccion_datos', () => {
    const password = 'password: { type: password, required: true,'
    expectProblem(edit(real, password, 'password: { type: password, personal: true, required: true,'), lineOf(password), 'modules.usuarios.fields.password.personal', 'a password is never shown')
    const testigos = '        max_items: 50\n'
    expectProblem(edit(real, testigos, `${testigos}        personal: true\n`), lineOf('        max_items: 50') + 1, 'modules.denuncias.fields.testigos.personal', 'set "personal: true" on those that are')
    const adjuntos = '      adjuntos: { type: file,'
    expectProblem(edit(real, adjuntos, '      adjuntos: { type: file, personal: true,'), lineOf(adjuntos), 'modules.denuncias.fields.adjuntos.personal', 'evidence files are not erased')
    expectProblem(edit(real, '    proteccion_datos: true\n', '    proteccion_dato: true\n'), lineOf('    proteccion_datos: true'), 'roles.delegado_proteccion_datos.proteccion_dato', 'unknown key "proteccion_dato"', 'did you mean "proteccion_datos"')
  })
})
