/**
 * CSV as spreadsheets write it (docs/user-guide.md "Import (importar)",
 * docs/decisions.md "CSV as spreadsheets write it"), through HTTP and the
 * database: an export re-imported into a fresh deployment gives equal
 * records (system fields aside; file fields keep their URL strings, their
 * files are left out with a note), with `,` and names and with `;` (decimal
 * comma) and labels; files as pandas writes them by default (its index
 * column, `3.0` for an integer with gaps, True/False, lists as Python
 * text, date-times with an offset after a space) and as Excel set to
 * Spanish saves them (windows-1252, `;`, decimal comma, VERDADERO/FALSO,
 * dd/mm/aaaa); the formula guard undone exactly once; and what is still
 * refused. No pandas or Excel here: the texts are written out as they
 * write them.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseRegistry } from '../../core/registry/load.js'
import { edit } from '../helpers/edit-text.js'
import { expectError } from '../helpers/errors.js'
import { call, ok, validDni, type Res } from '../helpers/http.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>

// Vehicles get a boolean, a decimal, a plain array and a date-time: every type a cell converts.
const registry = parseRegistry(edit(readFileSync('modules.yaml', 'utf8'), '      asignado_a: { type: ref, ref: personal, label: Asignado a }\n\n  sala092:', `      asignado_a: { type: ref, ref: personal, label: Asignado a }
      en_servicio: { type: boolean, label: En servicio }
      consumo: { type: decimal, label: Consumo }
      revisiones: { type: array, label: Revisiones }
      ultima_revision: { type: datetime, label: Última revisión }

  sala092:`), 'modules.yaml (+ vehiculos.en_servicio, consumo, revisiones, ultima_revision)')

/** Modules in the order a migration takes them: what others refer to first. */
const MODULES = ['personal', 'vehiculos', 'denuncias', 'sanciones'] as const

let source: TestApp
const made: Record<string, Rec[]> = {}

async function exportCsv (on: TestApp, module: string, query: string): Promise<string> {
  const res = await on.app.inject({ method: 'GET', url: `/${module}/exportar${query}`, headers: { authorization: `Bearer ${on.token}` } })
  expect(res.statusCode, res.body).toBe(200)
  return res.body
}

async function importCsv (on: TestApp, module: string, body: string | Buffer, query = '', type = 'text/csv'): Promise<Res> {
  const res = await on.app.inject({ method: 'POST', url: `/${module}/importar${query}`, headers: { authorization: `Bearer ${on.token}`, 'content-type': type }, payload: body })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

const count = async (on: TestApp, table: string): Promise<number> => Number((await on.h.db.query<{ n: string }>(`select count(*) as n from "${table}"`))[0]!.n)

/** A record as another deployment must hold it: no system field, and of a file field only its URL strings (null when none is left). */
function portable (module: string, r: Rec): Rec {
  const out: Rec = {}
  for (const [k, v] of Object.entries(r)) {
    if (k.startsWith('_')) continue
    if (registry.byName.get(module)!.fieldMap.get(k)!.type !== 'file' || v === null) { out[k] = v; continue }
    const urls = (v as unknown[]).filter((item) => typeof item === 'string')
    out[k] = urls.length === 0 ? null : urls
  }
  return out
}

beforeAll(async () => {
  source = await startTestApp({ registry })
  const post = async (module: string, body: Rec): Promise<Rec> => ok(await source.admin.post(`/${module}`, body), 201)
  const lucia = await post('personal', {
    tip: 'TIP-1', nif: validDni(1), nombre: 'Lucía', apellidos: 'Pérez, "Luci"', fecha_nacimiento: '1980-02-29', escala: 'inspector',
    categoria: '=categoría', fecha_ingreso: '2005-09-01', contacto_telefono: '+34 612 345 678', contacto_email: 'lucia@example.es',
    formacion: ['Tiro', 'Primeros auxilios'], idiomas: [],
  })
  const juan = await post('personal', { tip: 'TIP-2', nif: validDni(2), nombre: 'Juan', apellidos: 'Gil', escala: 'oficial' })
  await post('vehiculos', {
    matricula: '1234 ABC', marca: 'Seat', tipo: 'patrulla', km_actuales: 120000, consumo: 6.75, en_servicio: false, fecha_itv: '2026-12-31',
    revisiones: ['2026-01-10', { taller: 'Norte', km: 100000.5 }], ultima_revision: '2026-03-01T09:30:00Z', asignado_a: lucia._id,
  })
  await post('vehiculos', { matricula: '5678 DEF', tipo: 'moto', en_servicio: true, consumo: 0.25, km_actuales: 0 })
  const d1 = await post('denuncias', {
    denunciante_nombre: 'Pérez, "Juan"', denunciante_dni: validDni(3), denunciante_telefono: '+34 612 345 678', tipo: '=HYPERLINK("http://x")',
    fecha_hechos: '2026-06-01T10:00:00Z', lugar_hechos: 'Calle Mayor 1\nBajo; izquierda', descripcion: "'+empieza por comilla",
    testigos: [{ nombre: 'Luis', telefono: '-', declaracion: 'Vio "todo"; y se fue' }], agente_asignado: lucia._id, prioridad: 'alta',
    adjuntos: ['https://intranet.example/doc/1.pdf'], observaciones: '@nota',
  })
  const d2 = await post('denuncias', { denunciante_nombre: 'Ana', tipo: 'hurto', fecha_hechos: '2026-06-02 09:30:00', lugar_hechos: 'Plaza', descripcion: '-5 euros' })
  // One uploaded file on each: the second keeps nothing but it.
  for (const d of [d1, d2]) {
    const up = await source.app.inject({ method: 'POST', url: `/denuncias/${d._id as string}/archivos/adjuntos?nombre=acta.txt`, headers: { authorization: `Bearer ${source.token}`, 'content-type': 'text/plain' }, payload: Buffer.from('acta') })
    expect(up.statusCode, up.body).toBe(201)
  }
  await post('sanciones', { tipo: 'trafico', infractor_nombre: 'Ana', fecha_infraccion: '2026-06-01 10:00:00', lugar_infraccion: 'Calle', importe: 90.5, importe_reducido: 45.25, puntos_carnet: 3, agente_denunciante: juan._id })
  await post('sanciones', { tipo: 'ambiental', infractor_nombre: 'Eva', fecha_infraccion: '2026-06-02 10:00:00', lugar_infraccion: 'Parque', importe: 200, puntos_carnet: 0 })
  for (const m of MODULES) {
    const ids = (ok(await source.admin.get(`/${m}?sort=_id`)).records as Rec[]).map((r) => r._id as string)
    made[m] = await Promise.all(ids.map(async (id) => ok(await source.admin.get(`/${m}/${id}`)) as Rec))
  }
})
afterAll(async () => { await source?.h.close() })

const FILE_NOTE = {
  fila: 1,
  campo: 'adjuntos',
  mensaje: 'no se importan los archivos: se omitieron 2 archivos de 2 filas (el CSV solo trae sus datos, no su contenido); súbalos a cada registro creado con POST /denuncias/{id}/archivos/adjuntos',
}

describe('an export re-imported into a fresh deployment', () => {
  it.each([
    [',', 'nombres'],
    [';', 'etiquetas'],
  ])('gives equal records (separador %j, cabeceras=%s); files are left out with a note', async (separador, cabeceras) => {
    const fresh = await startTestApp({ registry })
    try {
      for (const m of MODULES) {
        const csv = await exportCsv(source, m, `?sort=_id&separador=${encodeURIComponent(separador)}&cabeceras=${cabeceras}`)
        if (m === 'sanciones') expect(csv).toContain(separador === ';' ? ';90,5;45,25;' : ',90.5,45.25,')
        if (m === 'personal') expect(csv).toContain(`${separador}'+34 612 345 678${separador}`)
        if (m === 'denuncias') expect(csv).toContain(`${separador}''+empieza por comilla${separador}`)
        // The dry run says the same as the import.
        const dry = ok(await importCsv(fresh, m, csv, '?simular=true'))
        expect(dry).toMatchObject({ filas: made[m]!.length, validas: made[m]!.length, errores: [] })
        const done = ok(await importCsv(fresh, m, csv), 201)
        if (m === 'denuncias') {
          expect(dry.avisos).toEqual([FILE_NOTE])
          expect(done.avisos).toEqual([FILE_NOTE])
        } else {
          expect(dry).not.toHaveProperty('avisos')
          expect(done).not.toHaveProperty('avisos')
        }
        // The same ids (a fresh deployment numbers from 1), so references hold.
        expect(done.ids).toEqual(made[m]!.map((r) => r._id))
        const copies = await Promise.all((done.ids as string[]).map(async (id) => ok(await fresh.admin.get(`/${m}/${id}`)) as Rec))
        expect(copies.map((r) => portable(m, r))).toEqual(made[m]!.map((r) => portable(m, r)))
        for (const id of done.ids as string[]) expect(ok(await fresh.admin.get(`/${m}/${id}/verificar`)).valido).toBe(true)
      }
      // What the comparison leaves aside, said here: the URL string stays, the uploads do not.
      const [d1, d2] = await Promise.all(made.denuncias!.map(async (r) => ok(await fresh.admin.get(`/denuncias/${r._id as string}`)) as Rec))
      expect(made.denuncias![0]!.adjuntos).toHaveLength(2)
      expect(d1!.adjuntos).toEqual(['https://intranet.example/doc/1.pdf'])
      expect(d2!.adjuntos).toBeNull()
      expect(d1).toMatchObject({ denunciante_telefono: '+34 612 345 678', descripcion: "'+empieza por comilla", observaciones: '@nota', tipo: '=HYPERLINK("http://x")' })
    } finally {
      await fresh.h.close()
    }
  })
})

describe('files as pandas writes them by default (DataFrame.to_csv)', () => {
  it('its index column, 3.0 for an integer with gaps, True/False, lists as Python text, date-times with an offset', async () => {
    // df.to_csv('vehiculos.csv'): `,`, LF, no BOM, the index first under an empty name, NaN as an empty cell.
    const csv = [
      ',matricula,marca,tipo,km_actuales,consumo,en_servicio,revisiones,ultima_revision,fecha_itv',
      `0,PD-1,Seat,patrulla,120000.0,6.75,True,"['2026-01-10', {'taller': 'Norte', 'km': 100000.5, 'ok': True, 'nota': None}]",2026-03-01 10:30:00+01:00,2026-12-31`,
      '1,PD-2,,moto,,0.5,False,[],2026-06-01 08:00:00+00:00,',
      `2,PD-3,O'Brien,furgon,7.0,12.0,false,"['Dijo ""basta""', 'l\\xednea\\n2', ""it's"", 'it\\'s ""x""']",2026-06-01 10:00:00.500000+02:00,`,
    ].join('\n') + '\n'
    const done = ok(await importCsv(source, 'vehiculos', csv), 201)
    const [a, b, c] = await Promise.all((done.ids as string[]).map(async (id) => ok(await source.admin.get(`/vehiculos/${id}`)) as Rec))
    expect(a).toMatchObject({ matricula: 'PD-1', marca: 'Seat', km_actuales: 120000, consumo: 6.75, en_servicio: true, ultima_revision: '2026-03-01 10:30:00', fecha_itv: '2026-12-31' })
    expect(a!.revisiones).toEqual(['2026-01-10', { taller: 'Norte', km: 100000.5, ok: true, nota: null }])
    expect(b).toMatchObject({ matricula: 'PD-2', marca: null, km_actuales: null, consumo: 0.5, en_servicio: false, revisiones: [], ultima_revision: '2026-06-01 10:00:00', fecha_itv: null })
    expect(c).toMatchObject({ marca: "O'Brien", km_actuales: 7, consumo: 12, en_servicio: false, ultima_revision: '2026-06-01 10:00:00' })
    expect(c!.revisiones).toEqual(['Dijo "basta"', 'línea\n2', "it's", 'it\'s "x"'])
  })

  it('with sep=\';\' pandas keeps the decimal point: read as such; a structured array as Python text', async () => {
    const sanciones = ';tipo;infractor_nombre;fecha_infraccion;lugar_infraccion;importe;puntos_carnet\n0;trafico;Rosa;2026-06-01 10:00:00+02:00;Calle;90.5;3.0\n1;ambiental;Íñigo;2026-06-02 10:00:00;Parque;100.0;\n'
    const done = ok(await importCsv(source, 'sanciones', sanciones), 201)
    const [a, b] = await Promise.all((done.ids as string[]).map(async (id) => ok(await source.admin.get(`/sanciones/${id}`)) as Rec))
    expect(a).toMatchObject({ infractor_nombre: 'Rosa', fecha_infraccion: '2026-06-01 10:00:00', importe: 90.5, puntos_carnet: 3 })
    expect(b).toMatchObject({ infractor_nombre: 'Íñigo', importe: 100, puntos_carnet: null })
    const denuncias = `denunciante_nombre;tipo;fecha_hechos;lugar_hechos;descripcion;testigos\nMar;robo;2026-06-03 10:00:00+02:00;Calle;Algo;"[{'nombre': ""O'Brien"", 'declaracion': 'Dijo: ""basta""'}]"\n`
    const [id] = ok(await importCsv(source, 'denuncias', denuncias), 201).ids as string[]
    expect(ok(await source.admin.get(`/denuncias/${id!}`)).testigos).toEqual([{ nombre: "O'Brien", declaracion: 'Dijo: "basta"' }])
  })
})

describe('files as Excel set to Spanish saves them ("CSV (delimitado por comas)")', () => {
  it('windows-1252, `;`, CRLF, decimal comma, VERDADERO/FALSO, dd/mm/aaaa, labels as the header', async () => {
    const text = [
      'Matrícula;Tipo de vehículo;En servicio;Consumo;Kilómetros;Fecha de la ITV;Última revisión',
      'EX-1;patrulla;VERDADERO;6,75;120000;31/12/2026;01/03/2026 10:30',
      'EX-2;moto;FALSO;0,5;;1/6/2026;15/06/2026 09:05:07',
    ].join('\r\n') + '\r\n'
    const done = ok(await importCsv(source, 'vehiculos', Buffer.from(text, 'latin1'), '', 'text/csv; charset=windows-1252'), 201)
    const [a, b] = await Promise.all((done.ids as string[]).map(async (id) => ok(await source.admin.get(`/vehiculos/${id}`)) as Rec))
    expect(a).toMatchObject({ matricula: 'EX-1', en_servicio: true, consumo: 6.75, km_actuales: 120000, fecha_itv: '2026-12-31', ultima_revision: '2026-03-01 10:30:00' })
    expect(b).toMatchObject({ matricula: 'EX-2', en_servicio: false, consumo: 0.5, km_actuales: null, fecha_itv: '2026-06-01', ultima_revision: '2026-06-15 09:05:07' })
    const sanciones = 'tipo;infractor_nombre;fecha_infraccion;lugar_infraccion;importe;importe_reducido;puntos_carnet\r\ntrafico;José Núñez;01/06/2026 10:00;"Calle Mayor; 3";90,5;45,25;3\r\n'
    const [id] = ok(await importCsv(source, 'sanciones', Buffer.from(sanciones, 'latin1'), '?codificacion=windows-1252'), 201).ids as string[]
    expect(ok(await source.admin.get(`/sanciones/${id!}`))).toMatchObject({ infractor_nombre: 'José Núñez', fecha_infraccion: '2026-06-01 10:00:00', lugar_infraccion: 'Calle Mayor; 3', importe: 90.5, importe_reducido: 45.25, puntos_carnet: 3 })
  })
})

describe('the formula guard', () => {
  it('one `\'` before a formula sign comes off; any other stays', async () => {
    const csv = "tip,nif,nombre,apellidos,escala,contacto_telefono,categoria,destino\r\nTIP-F1," + validDni(11) + ",'=Ana,''+Gil,oficial,'+34 612 345 678,'sin signo,'\t\r\n"
    const [id] = ok(await importCsv(source, 'personal', csv), 201).ids as string[]
    expect(ok(await source.admin.get(`/personal/${id!}`))).toMatchObject({ nombre: '=Ana', apellidos: "'+Gil", contacto_telefono: '+34 612 345 678', categoria: "'sin signo", destino: '\t' })
  })
})

describe('what is still refused', () => {
  it('each cell that does not convert is a problem of its field, in Spanish; nothing is written', async () => {
    const before = await count(source, 'vehiculos')
    const comma = [
      'matricula,tipo,km_actuales,consumo,en_servicio,revisiones,fecha_itv,ultima_revision',
      "R-1,moto,3.5,\"6,75\",sí,\"['a', nan]\",,",
      'R-2,moto,1e400,1e400,1,(1),,',
      // Day first only in a `;` file (a `,` one may come from a spreadsheet that writes the month first).
      'R-3,moto,,,,,31/12/2026,',
      'R-4,moto,,,,,,2026-06-01 10:00:00+2',
    ].join('\n')
    const report = ok(await importCsv(source, 'vehiculos', comma, '?simular=true'))
    expect(report).toMatchObject({ filas: 4, validas: 0 })
    expect(report.errores).toEqual([
      { fila: 2, campo: 'km_actuales', mensaje: 'debe ser un número entero' },
      { fila: 2, campo: 'consumo', mensaje: 'debe ser un número (con punto decimal)' },
      { fila: 2, campo: 'en_servicio', mensaje: 'debe ser true o false (también True/False o VERDADERO/FALSO)' },
      { fila: 2, campo: 'revisiones', mensaje: 'debe ser una lista en JSON' },
      { fila: 3, campo: 'km_actuales', mensaje: 'debe ser un número entero' },
      { fila: 3, campo: 'consumo', mensaje: 'debe ser un número (con punto decimal)' },
      { fila: 3, campo: 'en_servicio', mensaje: 'debe ser true o false (también True/False o VERDADERO/FALSO)' },
      { fila: 3, campo: 'revisiones', mensaje: 'debe ser una lista en JSON' },
      { fila: 4, campo: 'fecha_itv', mensaje: 'no tiene el formato esperado' },
      { fila: 5, campo: 'ultima_revision', mensaje: "no es una fecha y hora válida ('YYYY-MM-DD HH:MM:SS' o ISO 8601 con desfase, entre los años 1000 y 9999)" },
    ])
    const semicolon = 'matricula;tipo;consumo;km_actuales\nR-3;moto;1.234,5;3,5\n'
    const refused = await importCsv(source, 'vehiculos', semicolon)
    expectError(refused, 'DATOS_INVALIDOS')
    expect(refused.body.detalles).toEqual([
      { campo: 'fila 2: consumo', mensaje: 'debe ser un número (con coma o punto decimal)' },
      { campo: 'fila 2: km_actuales', mensaje: 'debe ser un número entero' },
    ])
    expect(await count(source, 'vehiculos')).toBe(before)
  })

  it('a file with only file objects in its file field still creates the record, with the note', async () => {
    const file = JSON.stringify([{ id: 'x', nombre: 'x.png', tipo: 'image/png', bytes: 1, sha256: '0'.repeat(64), subido: '2026-01-01 00:00:00', subido_por: 'USR-2026-00001' }])
    const csv = `denunciante_nombre,tipo,fecha_hechos,lugar_hechos,descripcion,adjuntos\nAna,robo,2026-05-01 10:00:00,x,x,"${file.replaceAll('"', '""')}"\n`
    const done = ok(await importCsv(source, 'denuncias', csv), 201)
    expect(done.avisos).toEqual([{ ...FILE_NOTE, mensaje: FILE_NOTE.mensaje.replace('se omitieron 2 archivos de 2 filas', 'se omitió 1 archivo de 1 fila') }])
    expect(ok(await source.admin.get(`/denuncias/${done.ids[0] as string}`)).adjuntos).toBeNull()
  })
})

// The helpers' `call` is the usual way in; this file sends Buffers, so it injects itself. Kept in use so a refactor sees both.
void call
