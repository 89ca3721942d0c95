/**
 * Labels (docs/administrator-guide.md "Labels"), through HTTP: what
 * modules.yaml says to a person reaches GET /me/modulos (`etiqueta`,
 * `ayuda`, `etiquetas_valores`, `formato: euros`), the OpenAPI document
 * (`title`, help in `description`) and, on request, a CSV export's header
 * (`cabeceras=etiquetas`), which an import reads back; the start refuses an
 * `enum_labels` key that is no enum value and `format: euros` off a decimal,
 * with file, line and hint; `npm run check` warns of what has no label
 * (none in the default file).
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ConfigError } from '../../core/errors.js'
import { parseRegistry } from '../../core/registry/load.js'
import type { Harness } from '../helpers/app.js'
import { edit } from '../helpers/edit-text.js'
import { expectError } from '../helpers/errors.js'
import { call, login, ok, type Api } from '../helpers/http.js'
import { startTestApp } from '../helpers/test-app.js'

const real = readFileSync('modules.yaml', 'utf8')
const dir = mkdtempSync(join(tmpdir(), 'policia-labels-'))
let h: Harness, app: FastifyInstance, token: string, admin: Api

beforeAll(async () => { ({ h, app, token, admin } = await startTestApp()) })
afterAll(async () => {
  await h.close()
  rmSync(dir, { recursive: true, force: true })
})

const modules = async (a = app, t = token): Promise<any[]> => ok(await call(a, 'GET', '/me/modulos', { token: t }))
const field = (mods: any[], mod: string, name: string): any => mods.find((m) => m.nombre === mod).campos.find((f: any) => f.nombre === name)
/** A CSV answer's text, without the byte-order mark. */
const csvText = (res: { body: unknown }): string => String(res.body).replace(/^\uFEFF/, '')

describe('GET /me/modulos', () => {
  it('gives every field and sub-field its label, help where declared, every enum value its label, and format euros', async () => {
    const mods = await modules()
    expect(field(mods, 'denuncias', 'denunciante_dni')).toMatchObject({ etiqueta: 'DNI del denunciante', formato: 'dni' })
    expect(field(mods, 'denuncias', 'fecha_hechos').etiqueta).toBe('Fecha de los hechos')
    expect(field(mods, 'denuncias', 'descripcion')).toMatchObject({ etiqueta: 'Descripción', ayuda: 'Los hechos tal como los relata el denunciante' })
    expect(field(mods, 'denuncias', 'lugar_hechos')).not.toHaveProperty('ayuda')
    expect(field(mods, 'denuncias', 'estado').etiquetas_valores).toEqual({ pendiente: 'Pendiente', investigacion: 'En investigación', archivada: 'Archivada', judicializada: 'Judicializada' })
    expect(field(mods, 'denuncias', 'testigos').elementos.map((s: any) => [s.nombre, s.etiqueta])).toEqual([['nombre', 'Nombre'], ['dni', 'DNI'], ['telefono', 'Teléfono'], ['domicilio', 'Domicilio'], ['declaracion', 'Declaración']])
    expect(field(mods, 'sanciones', 'importe')).toMatchObject({ etiqueta: 'Importe', tipo: 'decimal', formato: 'euros' })
    expect(field(mods, 'sanciones', 'importe')).not.toHaveProperty('patron')
    expect(field(mods, 'sala092', 'estado').etiquetas_valores.en_curso).toBe('En curso')
    expect(field(mods, 'turnos', 'tipo_turno').etiquetas_valores).toEqual({ mañana: 'Mañana', tarde: 'Tarde', noche: 'Noche' })
    expect(mods.find((m) => m.nombre === 'denuncias')).toMatchObject({ etiqueta: 'Denuncias', ayuda: expect.stringContaining('Denuncias recibidas') })
    expect(mods.find((m) => m.nombre === 'vehiculos')).not.toHaveProperty('ayuda')
  })

  it('the default modules.yaml labels everything: no field, sub-field or enum value shows its bare name', async () => {
    const bare: string[] = []
    for (const m of await modules()) {
      if (m.etiqueta === m.nombre) bare.push(m.nombre)
      for (const f of m.campos) {
        for (const s of [f, ...(f.elementos ?? [])]) {
          if (s.etiqueta === s.nombre) bare.push(`${m.nombre}.${s.nombre}`)
          expect(Object.keys(s.etiquetas_valores ?? {})).toEqual(s.enum ?? [])
          for (const [v, label] of Object.entries(s.etiquetas_valores ?? {})) if (label === v) bare.push(`${m.nombre}.${s.nombre}=${v}`)
        }
      }
    }
    expect(bare).toEqual([])
  })

  it('where a label is missing, the name: etiqueta always, etiquetas_valores for every enum value', async () => {
    const text = edit(edit(real, '      prioridad: { type: string, enum: [baja, media, alta, urgente], default: media, label: Prioridad, enum_labels: { baja: Baja, media: Media, alta: Alta, urgente: Urgente } }',
      '      prioridad: { type: string, enum: [baja, media, alta, urgente], default: media, enum_labels: { urgente: Urgente } }'),
    '      juzgado: { type: string, label: Juzgado }', '      juzgado: { type: string }')
    const again = await h.app({ registry: parseRegistry(text, 'temp.yaml') })
    const mods = await modules(again, await login(again))
    expect(field(mods, 'denuncias', 'prioridad')).toMatchObject({ etiqueta: 'prioridad', etiquetas_valores: { baja: 'baja', media: 'media', alta: 'alta', urgente: 'Urgente' } })
    expect(field(mods, 'atestados', 'juzgado').etiqueta).toBe('juzgado')
    expect(field(mods, 'atestados', 'juzgado')).not.toHaveProperty('etiquetas_valores')
    await h.closeApp(again)
  })
})

describe('the OpenAPI document', () => {
  it('titles each property of records and bodies with its label, and puts the help and the enum values\' labels in its description', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
    const record = doc.components.schemas.denunciasRecord.properties
    expect(record.estado.title).toBe('Estado')
    // An enum's value labels in its description, for whoever reads the document.
    expect(record.estado.description).toContain('investigacion (En investigación)')
    expect(record.denunciante_dni.title).toBe('DNI del denunciante')
    expect(record.agente_asignado).toMatchObject({ title: 'Agente asignado', description: 'Necesario para pasar la denuncia a «En investigación»' })
    expect(record.testigos.title).toBe('Testigos')
    expect(record.testigos.items.anyOf[0].properties.declaracion.title).toBe('Declaración')
    expect(doc.components.schemas.sancionesRecord.properties.importe).toMatchObject({ title: 'Importe', description: 'Importe en euros' })
    const body = doc.paths['/sanciones'].post.requestBody.content['application/json'].schema.properties
    expect(body.importe_reducido).toMatchObject({ title: 'Importe reducido', description: 'Importe con la reducción por pronto pago. Número con dos decimales como máximo. Importe en euros' })
    expect(body.fecha_infraccion.title).toBe('Fecha de la infracción')
  })
})

describe('CSV headers', () => {
  let ids: string[] = []
  beforeAll(async () => {
    ids = []
    for (const [n, tipo] of [[1, 'urgente'], [2, 'normal']] as const) {
      ids.push(ok(await admin.post('/sala092', { tipo_incidencia: tipo, descripcion: `Llamada ${n}, con coma`, operador: 'Operador etiquetas', ubicacion: 'Plaza Mayor' }), 201)._id)
    }
  })

  it('names by default; labels with cabeceras=etiquetas, system columns keeping their names', async () => {
    const query = '?operador=Operador%20etiquetas&campos=tipo_incidencia,descripcion,estado,_version&sort=_id'
    const names = await admin.get(`/sala092/exportar${query}`)
    expect(names.status).toBe(200)
    expect(csvText(names).split('\r\n')[0]).toBe('_id,tipo_incidencia,descripcion,estado,_version')
    const labels = await admin.get(`/sala092/exportar${query}&cabeceras=etiquetas&separador=%3B`)
    expect(labels.status).toBe(200)
    const lines = csvText(labels).split('\r\n')
    expect(lines[0]).toBe('_id;Tipo de incidencia;Descripción;Estado;_version')
    expect(lines[1]).toBe(`${ids[0]!};urgente;Llamada 1, con coma;pendiente;1`)
    expect(csvText(await admin.get(`/sala092/exportar${query}&cabeceras=nombres`))).toBe(csvText(names))
  })

  it('refuses cabeceras that is no choice, or with ndjson', async () => {
    const bad = await admin.get('/sala092/exportar?cabeceras=titulos')
    expectError(bad, 'DATOS_INVALIDOS')
    expect(bad.body.detalles).toEqual([{ campo: 'cabeceras', mensaje: 'debe ser nombres o etiquetas' }])
    const ndjson = await admin.get('/sala092/exportar?formato=ndjson&cabeceras=etiquetas')
    expect(ndjson.body.detalles).toEqual([{ campo: 'cabeceras', mensaje: 'solo se aplica a formato=csv' }])
  })

  it('an export with labels imports back: a header cell is a field\'s name or its label', async () => {
    const exported = csvText(await admin.get('/sala092/exportar?operador=Operador%20etiquetas&cabeceras=etiquetas&sort=_id'))
    expect(exported.split('\r\n')[0]).toMatch(/^_id,Teléfono de la llamada,Fecha y hora de entrada,Tipo de incidencia,Categoría,Descripción,Ubicación,Operador,/)
    const data = ok(await call(app, 'POST', '/sala092/importar', { token, raw: exported, headers: { 'content-type': 'text/csv' } }), 201)
    expect(data).toMatchObject({ filas: 2, creados: 2 })
    const copy = ok(await admin.get(`/sala092/${data.ids[0] as string}`))
    expect(copy).toMatchObject({ tipo_incidencia: 'urgente', descripcion: 'Llamada 1, con coma', ubicacion: 'Plaza Mayor', operador: 'Operador etiquetas' })
    // Names and labels mixed in one header.
    const mixed = 'Tipo de incidencia,descripcion,Ubicación\r\ninformacion,Consulta,Calle Luna\r\n'
    const one = ok(await call(app, 'POST', '/sala092/importar', { token, raw: mixed, headers: { 'content-type': 'text/csv' } }), 201)
    expect(ok(await admin.get(`/sala092/${one.ids[0] as string}`))).toMatchObject({ tipo_incidencia: 'informacion', descripcion: 'Consulta', ubicacion: 'Calle Luna' })
  })

  it('a label matches as written (case and accents), and a field named twice by name and label is a repeated column', async () => {
    const simulate = async (csv: string): Promise<any> => ok(await call(app, 'POST', '/sala092/importar?simular=true', { token, raw: csv, headers: { 'content-type': 'text/csv' } }))
    const loose = await simulate('tipo de incidencia,Descripcion\r\nurgente,X\r\n')
    expect(loose.errores).toEqual(expect.arrayContaining([
      { fila: 1, campo: 'tipo de incidencia', mensaje: 'no es un campo de este módulo' },
      { fila: 1, campo: 'Descripcion', mensaje: 'no es un campo de este módulo' },
    ]))
    const twice = await simulate('descripcion,Descripción,tipo_incidencia\r\nA,B,urgente\r\n')
    expect(twice.errores).toContainEqual({ fila: 1, campo: 'Descripción', mensaje: 'columna repetida' })
  })

  it('a header cell that is one field\'s name and another\'s label, or two fields\' label, is refused: 400 on row 1', async () => {
    // vehiculos.modelo labelled "Marca" (marca's label) and bastidor labelled "marca" (another field's name).
    const text = edit(edit(real, '      modelo: { type: string, label: Modelo }\n      tipo: { type: string, required: true, enum: [patrulla',
      '      modelo: { type: string, label: Marca }\n      tipo: { type: string, required: true, enum: [patrulla'),
    'label: Número de bastidor', 'label: marca')
    const again = await h.app({ registry: parseRegistry(text, 'temp.yaml') })
    const t = await login(again)
    const importar = async (csv: string): Promise<any> => call(again, 'POST', '/vehiculos/importar?simular=true', { token: t, raw: csv, headers: { 'content-type': 'text/csv' } })
    const byName = await importar('matricula,tipo,marca\r\n1234ABC,moto,X\r\n')
    expectError(byName, 'DATOS_INVALIDOS')
    expect(byName.body.detalles).toEqual([{ campo: 'fila 1', mensaje: 'la columna "marca" es ambigua: es el nombre o la etiqueta de los campos marca, bastidor; use el nombre del campo' }])
    const byLabel = await importar('matricula,tipo,Marca\r\n1234ABC,moto,X\r\n')
    expectError(byLabel, 'DATOS_INVALIDOS')
    expect(byLabel.body.detalles).toEqual([{ campo: 'fila 1', mensaje: 'la columna "Marca" es ambigua: es el nombre o la etiqueta de los campos marca, modelo; use el nombre del campo' }])
    // Without the ambiguous cell the same file is read: names and unambiguous labels.
    expect(ok(await importar('matricula,Tipo de vehículo\r\n1234ABC,moto\r\n'))).toMatchObject({ filas: 1, validas: 1, errores: [] })
    await h.closeApp(again)
  })
})

describe('modules.yaml', () => {
  const startWith = async (text: string): Promise<string> => {
    const file = join(dir, `modules-${Math.random().toString(36).slice(2)}.yaml`)
    writeFileSync(file, text)
    const err = await h.app({ env: { MODULES_FILE: file } }).then(() => undefined, (e: unknown) => e)
    expect(err).toBeInstanceOf(ConfigError)
    return (err as ConfigError).message.replaceAll(file, 'modules.yaml')
  }
  const lineOf = (text: string, part: string): number => text.split('\n').findIndex((l) => l.includes(part)) + 1

  it('the start refuses an enum_labels key that is no enum value, with its line and the closest value', async () => {
    const text = edit(real, 'enum_labels: { pendiente: Pendiente, en_curso: En curso,', 'enum_labels: { pendiente: Pendiente, en_cruso: En curso,')
    expect(await startWith(text)).toBe(`modules.yaml is not valid:\n  modules.yaml:${lineOf(text, 'en_cruso')}: modules.sala092.fields.estado.enum_labels.en_cruso: "en_cruso" is not one of the enum values of estado (pendiente, en_curso, resuelta) (did you mean "en_curso"?)`)
    const noEnum = edit(real, '      juzgado: { type: string, label: Juzgado }', '      juzgado: { type: string, label: Juzgado, enum_labels: { a: A } }')
    expect(await startWith(noEnum)).toContain(`modules.yaml:${lineOf(noEnum, 'juzgado: {')}: modules.atestados.fields.juzgado.enum_labels: only fields with enum values take enum_labels`)
    const misspelt = edit(real, '      juzgado: { type: string, label: Juzgado }', '      juzgado: { type: string, lable: Juzgado }')
    expect(await startWith(misspelt)).toContain('modules.atestados.fields.juzgado.lable: unknown key "lable" (did you mean "label"?)')
  })

  it('the start refuses format: euros on a field that is not a decimal', async () => {
    const text = edit(real, '      puntos_carnet: { type: integer,', '      puntos_carnet: { type: integer, format: euros,')
    expect(await startWith(text)).toBe(`modules.yaml is not valid:\n  modules.yaml:${lineOf(text, 'puntos_carnet:')}: modules.sanciones.fields.puntos_carnet.format: format euros is for decimal fields (this one is integer)`)
    const eurso = edit(real, '      importe: { type: decimal, format: euros,', '      importe: { type: decimal, format: eruos,')
    expect(await startWith(eurso)).toContain('unknown format "eruos" (did you mean "euros"?); formats are dni, euros')
  })
})

describe('npm run check', () => {
  const check = async (file: string): Promise<{ code: number, out: string }> => {
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/check.ts', file, '--sin-entorno'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent' } })
      return { code: 0, out: stdout }
    } catch (err) {
      const e = err as { code: number, stdout: string, stderr: string }
      return { code: e.code, out: e.stdout + e.stderr }
    }
  }

  it('finds no missing label in the default modules.yaml', async () => {
    const r = await check('modules.yaml')
    expect(r.code, r.out).toBe(0)
    expect(r.out).toContain('labels: every module, field, sub-field, state and enum value has one\n')
    expect(r.out).not.toContain('warning:')
  })

  it('lists each module, field, sub-field, state and enum value without a label, with its line, and exits 0', async () => {
    const fixture = resolve('test/fixtures/modules-missing-labels.yaml')
    const text = readFileSync(fixture, 'utf8')
    const at = (part: string): string => `${fixture}:${text.split('\n').findIndex((l) => l.includes(part)) + 1}`
    const r = await check(fixture)
    expect(r.code, r.out).toBe(0)
    expect(r.out.split('\n').filter((l) => l.startsWith('warning:'))).toEqual([
      `warning: ${at('  avisos:')}: modules.avisos: module "avisos" has no label (a person reads "avisos")`,
      `warning: ${at('importe:')}: modules.avisos.fields.importe: field "importe" has no label (a person reads "importe")`,
      `warning: ${at('estado:')}: modules.avisos.fields.estado.enum.1: state "en_curso" of estado has no label in enum_labels (a person reads "en_curso")`,
      `warning: ${at('papel:')}: modules.avisos.fields.personas.items.papel: sub-field "papel" has no label (a person reads "papel")`,
      `warning: ${at('papel:')}: modules.avisos.fields.personas.items.papel.enum.0: enum value "testigo" of papel has no label in enum_labels (a person reads "testigo")`,
      `warning: ${at('papel:')}: modules.avisos.fields.personas.items.papel.enum.1: enum value "victima" of papel has no label in enum_labels (a person reads "victima")`,
    ])
    expect(r.out).toContain('labels: 6 warning(s)')
  })

  it('warns of a label that is another field\'s name or label (a CSV header could not tell them apart)', async () => {
    const file = join(dir, 'shared.yaml')
    const text = edit(real, '      modelo: { type: string, label: Modelo }\n      tipo: { type: string, required: true, enum: [patrulla', '      modelo: { type: string, label: Marca }\n      tipo: { type: string, required: true, enum: [patrulla')
    writeFileSync(file, text)
    const r = await check(file)
    expect(r.code, r.out).toBe(0)
    const line = text.split('\n').findIndex((l) => l.includes('modelo: { type: string, label: Marca }')) + 1
    expect(r.out).toContain(`warning: ${file}:${line}: modules.vehiculos.fields.modelo.label: the label "Marca" of modelo is also the label of marca: a CSV header naming it is refused as ambiguous`)
  })
})
