/**
 * Printed records (docs/user-guide.md "Printed records"): GET
 * /{module}/{id}/documento as a person reads it (pdftotext), the fields a
 * role may not decrypt withheld and those `documento.excluir` names left
 * out, the read log's `documento` entries, the code under the QR code
 * (decoded from the rendered page) checked by POST /documentos/verificar
 * and offline by `npm run verificar-documento`, and the refusals in the
 * usual envelope.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { call } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { pdfImageCount, pdfInfo, pdfQr, pdfStructure, pdfText } from '../helpers/pdf.js'
import { expectError } from '../helpers/errors.js'

const DENUNCIA = {
  denunciante_nombre: 'Begoña Núñez Peña',
  denunciante_dni: '12345678Z',
  denunciante_domicilio: 'Calle del Olmo 3, 2.º B',
  tipo: 'robo',
  fecha_hechos: '2026-06-01 10:30:00',
  lugar_hechos: 'Plaza de la Constitución',
  descripcion: 'Sustracción de una bicicleta amarrada a una farola.',
  testigos: [{ nombre: 'Łukasz Żółć', dni: '00000000T', declaracion: 'Vio a dos personas cortar el candado.' }],
  prioridad: 'alta',
  observaciones: 'Nota interna: posible relación con el caso de la semana pasada.',
}

let t: TestApp
let id: string

async function printed (app: FastifyInstance, path: string, token?: string): Promise<{ status: number, type: string, disposition: string, pdf: Buffer, json: () => any }> {
  const res = await app.inject({ method: 'GET', url: path, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  return { status: res.statusCode, type: String(res.headers['content-type']), disposition: String(res.headers['content-disposition']), pdf: res.rawPayload, json: () => res.json() }
}

/** The code as printed under "Código de verificación", joined again. */
function codeIn (text: string): string {
  const m = /Código de verificación\s+([A-Z0-9-]+\.\d+\.[A-Z2-7 \n]+?)\s*\n\s*\n/.exec(text)
  expect(m, text).not.toBeNull()
  return m![1]!.replace(/\s+/g, '')
}

const verify = async (codigo: string): Promise<any> => {
  const res = await call(t.app, 'POST', '/documentos/verificar', { body: { codigo } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data
}

beforeAll(async () => {
  t = await startTestApp({ env: { FORCE_NAME: 'Policía Local de Villanueva del Ñandú' } })
  const res = await t.admin.post('/denuncias', DENUNCIA)
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  id = res.body.data._id
})
afterAll(async () => { await t?.h.close() })

describe('a printed denuncia', () => {
  let text: string
  /** The text with every run of spaces and line breaks as one space (where pdftotext breaks a line is the layout's business). */
  let flat: string
  let code: string
  let pdf: Buffer

  it('is an A4 PDF of real, tagged text: the force, every field by its label in Spanish, the id, version and seal', async () => {
    const res = await printed(t.app, `/denuncias/${id}/documento`, t.token)
    expect(res.status).toBe(200)
    expect(res.type).toBe('application/pdf')
    expect(res.disposition).toBe(`inline; filename="${id}-v1.pdf"; filename*=UTF-8''${id}-v1.pdf`)
    pdf = res.pdf
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
    const info = pdfInfo(pdf)
    expect(info.Tagged).toBe('yes')
    expect(info['Page size']).toMatch(/^595\.\d+ x 841\.\d+ pts \(A4\)/)
    expect(info.Title).toBe(`Denuncias ${id}`)
    // Tagged: a heading, each field a list item of label and value, the seal and the code as code, the QR code as a figure.
    const structure = pdfStructure(pdf).split('\n').map((l) => l.trim().replace(/ \(.*\)$/, ''))
    expect(structure[0]).toBe('Document')
    const denuncias = t.app.registry.byName.get('denuncias')!
    expect(structure.filter((e) => e === 'LBody').length).toBe(denuncias.fields.length - denuncias.printExcluded.length)
    for (const element of ['H1', 'L', 'LI', 'Lbl', 'H2', 'Code', 'Figure']) expect(structure).toContain(element)
    text = pdfText(pdf)
    flat = text.replace(/\s+/g, ' ')
    const record = (await t.admin.get(`/denuncias/${id}`)).body.data
    for (const expected of ['Policía Local de Villanueva del Ñandú', 'Denuncias', `Registro ${id} · versión 1`, 'Nombre del denunciante', 'Begoña Núñez Peña',
      'DNI del denunciante', '12345678Z', 'Fecha de los hechos', '01/06/2026 10:30', 'Prioridad', 'Alta', 'Estado', 'Pendiente',
      'Testigos', '• Nombre: Łukasz Żółć; DNI: 00000000T; Declaración: Vio a dos personas cortar el candado.', 'Agente asignado', '—',
      'Sello de la versión (SHA-256)', record._hash, 'Página 1 de 1', `Denuncias ${id} · versión 1`, 'Impreso el ', ' por admin']) {
      expect(flat).toContain(expected)
    }
  })

  it('leaves out the fields documento.excluir names (the complainant\'s copy)', () => {
    expect(text).not.toContain('Observaciones')
    expect(text).not.toContain('Nota interna')
  })

  it('carries a code in its QR code that POST /documentos/verificar, with no token, finds valid, naming only the id and version', async () => {
    code = codeIn(text)
    expect(pdfQr(pdf)).toBe(code)
    const verdict = await verify(code)
    expect(verdict).toEqual({ valido: true, id, version: 1, hay_version_posterior: false })
    // As typed from the paper: lower case, in groups.
    expect((await verify(code.toLowerCase().replace(/(.{8})/g, '$1 '))).valido).toBe(true)
  })

  it('refuses a changed code, and says when a newer version exists', async () => {
    const tail = code.slice(code.lastIndexOf('.') + 1)
    const flipped = `${code.slice(0, code.lastIndexOf('.') + 1)}${tail.slice(0, 60)}${tail[60] === 'A' ? 'B' : 'A'}${tail.slice(61)}`
    expect(await verify(flipped)).toMatchObject({ valido: false, id, version: 1 })
    expect(await verify(code.replace(`${id}.1.`, `${id}.2.`))).toMatchObject({ valido: false, id, version: 2 })
    const edited = await t.admin.put(`/denuncias/${id}`, { prioridad: 'urgente' }, { 'if-match': '"1"' })
    expect(edited.status, JSON.stringify(edited.body)).toBe(200)
    expect(await verify(code)).toEqual({ valido: true, id, version: 1, hay_version_posterior: true })
    const reprinted = (await printed(t.app, `/denuncias/${id}/documento`, t.token)).pdf
    const again = pdfText(reprinted)
    expect(again).toContain(`Registro ${id} · versión 2`)
    expect(again).toContain('Urgente')
    expect(await verify(pdfQr(reprinted)!)).toEqual({ valido: true, id, version: 2, hay_version_posterior: false })
  })

  it('verifies offline with the published public key: npm run verificar-documento', async () => {
    const key = (await t.admin.post('/auditoria/puntos-control')).body.data.clave_publica as string
    const run = (...args: string[]): { status: number | null, out: string } => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'bin/verificar-documento.ts', ...args], { encoding: 'utf8' })
      return { status: r.status, out: r.stdout + r.stderr }
    }
    const good = run('--clave', key, code)
    expect(good.out).toContain(`valid: ${id}, version 1, seal (SHA-256) `)
    expect(good.status).toBe(0)
    // A letter inside the signature: the last one also carries base32's padding bits, and changing those makes no code at all (status 2).
    const at = code.length - 10
    const bad = run('--clave', key, `${code.slice(0, at)}${code[at] === 'A' ? 'B' : 'A'}${code.slice(at + 1)}`)
    expect(bad.status).toBe(1)
    expect(bad.out).toContain('NOT valid')
    expect(run('--help').out).toContain('verificar-documento')
    expect(run('--clave', key, 'no-es-un-codigo').status).toBe(2)
  }, 60_000)

  it('withholds encrypted values from a role without descifrar, and logs every print as a documento read', async () => {
    const consulta = await newUser(t.app, t.token, 'consulta')
    const res = await printed(t.app, `/denuncias/${id}/documento`, consulta.token)
    expect(res.status).toBe(200)
    const seen = pdfText(res.pdf).replace(/\s+/g, ' ')
    expect(seen).toContain('DNI del denunciante Restringido')
    // A withheld sub-field is said to be withheld whether or not the witness gave one: its absence would tell.
    expect(seen).toContain('• Nombre: Łukasz Żółć; DNI: Restringido; Teléfono: Restringido; Domicilio: Restringido; Declaración: Vio a dos personas cortar el candado.')
    expect(seen).not.toContain('12345678Z')
    expect(seen).not.toContain('00000000T')
    expect(seen).not.toContain('Calle del Olmo')
    const log = (await t.admin.get(`/auditoria/lecturas?tipo=documento&registro=${id}`)).body.data.records as any[]
    expect(log.map((e) => [e.usuario, e.campos])).toEqual([
      [consulta.id, []],
      [expect.any(String), ['denunciante_dni', 'denunciante_domicilio', 'testigos.dni']],
      [expect.any(String), ['denunciante_dni', 'denunciante_domicilio', 'testigos.dni']],
    ])
    expect(log.every((e) => e.modulo === 'denuncias' && e.ruta === 'GET /denuncias/:id/documento')).toBe(true)
  })
})

describe('refusals, in the envelope and never a broken PDF', () => {
  it('an unknown record is 404, another module\'s record outside the role 403, no token 401', async () => {
    expectError(await call(t.app, 'GET', '/denuncias/DEN-2026-99999/documento', { token: t.token }), 'REGISTRO_NO_ENCONTRADO')
    const agente = await newUser(t.app, t.token, 'agente')
    expectError(await call(t.app, 'GET', '/atestados/ATE-2026-00001/documento', { token: agente.token }), 'SIN_PERMISOS')
    // An agente sees only its own denuncias: another's is not found.
    expectError(await call(t.app, 'GET', `/denuncias/${id}/documento`, { token: agente.token }), 'REGISTRO_NO_ENCONTRADO')
    expectError(await call(t.app, 'GET', `/denuncias/${id}/documento`), 'TOKEN_NO_PROPORCIONADO')
  })

  it('a text that is no code is a 400 naming codigo; an empty body names it too', async () => {
    const res = await call(t.app, 'POST', '/documentos/verificar', { body: { codigo: 'DEN-2026-00001.1.XYZ' } })
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo: 'codigo', mensaje: expect.stringContaining('no es un código de verificación') }])
    expectError(await call(t.app, 'POST', '/documentos/verificar', { body: {} }), 'DATOS_REQUERIDOS')
  })
})

describe('the force\'s logo', () => {
  it('prints FORCE_LOGO atop each page; a file that is no image stops the start with the fix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'policia-logo-'))
    const logo = join(dir, 'escudo.png')
    writeFileSync(logo, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'))
    const other = await t.h.app({ env: { FORCE_LOGO: logo } })
    const res = await printed(other, `/denuncias/${id}/documento`, t.token)
    expect(res.status).toBe(200)
    expect(pdfImageCount(res.pdf)).toBe(Number(pdfInfo(res.pdf).Pages))
    const notImage = join(dir, 'escudo.svg')
    writeFileSync(notImage, '<svg xmlns="http://www.w3.org/2000/svg"/>')
    await expect(t.h.app({ env: { FORCE_LOGO: notImage } })).rejects.toThrow(/FORCE_LOGO .*escudo\.svg is neither a PNG nor a JPEG/)
  })
})
