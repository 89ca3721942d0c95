/**
 * Import (docs/user-guide.md "Import (importar)"): CSV in the export's
 * dialect and NDJSON, every row validated like a POST, reported by row and
 * field, all or nothing, `simular` writing nothing; through HTTP and the
 * database.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { runImport } from '../../bin/import.js'
import { testEnv, type Harness } from '../helpers/app.js'
import { usingPostgres } from '../helpers/services.js'
import { call, login, ok, validDni, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'

let h: Harness, app: FastifyInstance, token: string, admin: Api
let agente: string

beforeAll(async () => {
  ({ h, app, token, admin } = await startTestApp())
  agente = ok(await admin.post('/personal', { tip: 'TIP-IMP-1', nif: validDni(44_000_001), nombre: 'Ana', apellidos: 'Ruiz', escala: 'oficial' }), 201)._id
})
afterAll(async () => { await h.close() })

const importar = (module: string, body: string, type: string, query = '', t = token) =>
  call(app, 'POST', `/${module}/importar${query}`, { token: t, raw: body, headers: { 'content-type': type } })

async function count (table: string): Promise<number> {
  const rows = await app.orm.em.fork().getConnection().execute<Array<{ n: number }>>(`select count(*)::int as n from "${table}"`)
  return rows[0]!.n
}

const HEADER = 'denunciante_nombre;tipo;fecha_hechos;lugar_hechos;descripcion;testigos;agente_asignado;_id;_version'

describe('a CSV in the export\'s dialect', () => {
  it('creates every row in file order, each with its history entry and a seal that verifies', async () => {
    const csv = '\uFEFF' + [
      HEADER,
      `Ana Ruiz;hurto;2026-06-01 10:00:00;"Calle Mayor; 3";"Dijo ""basta""\r\nen dos líneas";"[{""nombre"":""Luis""}]";${agente};DEN-2020-00001;7`,
      'Luis Gil;\'=SUMA(A1);2026-06-02 11:00:00;Plaza;\'-5 euros;;;;',
      'Eva Sanz;robo;2026-06-03T10:00:00Z;Calle Luna;Sin testigos;[];;;',
    ].join('\r\n') + '\r\n'
    const before = await count('denuncias')
    const data = ok(await importar('denuncias', csv, 'text/csv'), 201)
    expect(data).toMatchObject({ filas: 3, creados: 3 })
    expect(await count('denuncias')).toBe(before + 3)
    const ids = data.ids as string[]
    const seq = ids.map((id) => Number(id.split('-')[2]))
    expect(seq).toEqual([seq[0], seq[0]! + 1, seq[0]! + 2])
    const [a, b, c] = await Promise.all(ids.map(async (id) => ok(await admin.get(`/denuncias/${id}`))))
    expect(a).toMatchObject({ denunciante_nombre: 'Ana Ruiz', lugar_hechos: 'Calle Mayor; 3', descripcion: 'Dijo "basta"\r\nen dos líneas', testigos: [{ nombre: 'Luis' }], agente_asignado: agente, estado: 'pendiente', _version: 1 })
    expect(b).toMatchObject({ tipo: '=SUMA(A1)', descripcion: '-5 euros', testigos: null, agente_asignado: null })
    expect(c).toMatchObject({ fecha_hechos: '2026-06-03 12:00:00', testigos: [] })
    for (const id of ids) {
      const versions = ok(await admin.get(`/denuncias/${id}/historial`)).versiones as Array<{ accion: string, _version: number }>
      expect(versions).toMatchObject([{ accion: 'crear', _version: 1 }])
      expect(ok(await admin.get(`/denuncias/${id}/verificar`)).valido).toBe(true)
    }
  })

  it('reads `,` as the separator from the header line, or the one `separador` names', async () => {
    const comma = 'tipo,denunciante_nombre,fecha_hechos,lugar_hechos,descripcion\nhurto,"Ruiz, Ana",2026-06-01 10:00:00,Calle,Algo\n'
    expect(ok(await importar('denuncias', comma, 'text/csv; charset=utf-8'), 201).creados).toBe(1)
    // A header without either separator (one column) is read with the one named.
    const one = 'nombre\nx\n'
    const report = ok(await importar('equipamiento', one, 'text/csv', '?simular=true&separador=;'))
    expect(report.errores).toContainEqual({ fila: 2, campo: 'tipo', mensaje: 'es obligatorio' })
  })
})

describe('NDJSON', () => {
  it('creates one record per line in order; `_` keys are ignored as in a POST', async () => {
    const body = [
      JSON.stringify({ tip: 'TIP-IMP-10', nif: validDni(44_000_010), nombre: 'Uno', apellidos: 'A', escala: 'oficial', _id: 'PER-1999-00001' }),
      '',
      JSON.stringify({ tip: 'TIP-IMP-11', nif: validDni(44_000_011), nombre: 'Dos', apellidos: 'B', escala: 'inspector', idiomas: ['en'] }),
    ].join('\n')
    const data = ok(await importar('personal', body, 'application/x-ndjson'), 201)
    expect(data.creados).toBe(2)
    const [one, two] = await Promise.all((data.ids as string[]).map(async (id) => ok(await admin.get(`/personal/${id}`))))
    expect(one).toMatchObject({ tip: 'TIP-IMP-10', nif: validDni(44_000_010) })
    expect(two).toMatchObject({ tip: 'TIP-IMP-11', idiomas: ['en'] })
    expect(Number((data.ids[1] as string).split('-')[2])).toBe(Number((data.ids[0] as string).split('-')[2]) + 1)
  })
})

describe('problems', () => {
  const rows = (lines: string[]): string => [HEADER, ...lines].join('\n')

  it('simular writes nothing and reports every problem by row and field', async () => {
    const before = await count('denuncias')
    const csv = rows([
      'Ana;hurto;2026-06-01 10:00:00;Calle;Bien;;;;',
      ';hurto;2026-13-01 10:00:00;Calle;Mal;no-es-json;;;',
      `Eva;robo;2026-06-01 10:00:00;Calle;Mal;;PER-2026-99999;;`,
    ])
    const report = ok(await importar('denuncias', csv, 'text/csv', '?simular=true'))
    expect(report).toMatchObject({ filas: 3, validas: 1, errores_omitidos: 0 })
    expect(report.errores).toEqual([
      { fila: 3, campo: 'testigos', mensaje: 'debe ser una lista en JSON' },
      { fila: 3, campo: 'denunciante_nombre', mensaje: 'es obligatorio' },
      { fila: 4, campo: 'agente_asignado', mensaje: 'no existe Personal con id PER-2026-99999' },
    ])
    expect(await count('denuncias')).toBe(before)
    // The valid file, simulated: no problem, still nothing written.
    const clean = ok(await importar('denuncias', rows(['Ana;hurto;2026-06-01 10:00:00;Calle;Bien;;;;']), 'text/csv', '?simular=true'))
    expect(clean).toEqual({ filas: 1, validas: 1, errores: [], errores_omitidos: 0 })
    expect(await count('denuncias')).toBe(before)
  })

  it('one bad row: 400 with the report in detalles, and nothing is written', async () => {
    const before = await count('denuncias')
    const historyBefore = await count('sys_historial')
    const res = await importar('denuncias', rows([
      'Ana;hurto;2026-06-01 10:00:00;Calle;Bien;;;;',
      'Luis;hurto;mañana;Calle;Bien;;;;',
      'Eva;robo;2026-06-01 10:00:00;Calle;Bien;;;;',
    ]), 'text/csv')
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo: 'fila 3: fecha_hechos', mensaje: expect.any(String) }])
    expect(await count('denuncias')).toBe(before)
    expect(await count('sys_historial')).toBe(historyBefore)
  })

  it('a unique value repeated in the file or already stored, and unknown columns', async () => {
    const line = (tip: string, n: number): string => JSON.stringify({ tip, nif: validDni(n), nombre: 'X', apellidos: 'Y', escala: 'oficial' })
    const res = await importar('personal', [line('TIP-IMP-20', 44_000_020), line('TIP-IMP-20', 44_000_021), line('TIP-IMP-1', 44_000_022), line('TIP-IMP-23', 44_000_020)].join('\n'), 'application/x-ndjson')
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([
      { campo: 'fila 2: tip', mensaje: 'repite el valor de la fila 1' },
      { campo: 'fila 3: tip', mensaje: 'ya existe un registro con este valor' },
      { campo: 'fila 4: nif', mensaje: 'repite el valor de la fila 1' },
    ])
    const header = ok(await importar('personal', 'tip,color\nT,rojo\n', 'text/csv', '?simular=true'))
    expect(header.errores).toContainEqual({ fila: 1, campo: 'color', mensaje: 'no es un campo de este módulo' })
    expect(header.errores).toContainEqual({ fila: 2, campo: 'nif', mensaje: 'es obligatorio' })
    const garbled = ok(await importar('personal', '{"tip": 1\n[1]\n', 'application/x-ndjson', '?simular=true'))
    expect(garbled.errores).toEqual([{ fila: 1, campo: '', mensaje: 'no es JSON válido' }, { fila: 2, campo: '', mensaje: 'debe ser un objeto JSON' }])
  })

  it('across batches: a repeat far down the file is named by its first row, once, in the dry run and the refusal alike; a clean file of many batches is written whole', async () => {
    const line = (tip: string, n: number): string => JSON.stringify({ tip, nif: validDni(n), nombre: 'X', apellidos: 'Y', escala: 'oficial' })
    const lines = Array.from({ length: 1300 }, (_, i) => line(`TIP-BIG-${i}`, 45_000_000 + i))
    lines[1199] = line('TIP-BIG-3', 45_001_199) // row 1200 repeats row 4's tip
    lines[1249] = line('TIP-IMP-1', 45_001_249) // row 1250: a tip already stored
    lines[1299] = line('TIP-BIG-1299', 45_000_010) // row 1300 repeats row 11's (encrypted) nif
    const expected = [
      { fila: 1200, campo: 'tip', mensaje: 'repite el valor de la fila 4' },
      { fila: 1250, campo: 'tip', mensaje: 'ya existe un registro con este valor' },
      { fila: 1300, campo: 'nif', mensaje: 'repite el valor de la fila 11' },
    ]
    const before = await count('personal')
    const dry = ok(await importar('personal', lines.join('\n'), 'application/x-ndjson', '?simular=true'))
    expect(dry).toEqual({ filas: 1300, validas: 1297, errores: expected, errores_omitidos: 0 })
    const res = await importar('personal', lines.join('\n'), 'application/x-ndjson')
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual(expected.map((p) => ({ campo: `fila ${p.fila}: ${p.campo}`, mensaje: p.mensaje })))
    expect(await count('personal')).toBe(before)
    lines[1199] = line('TIP-BIG-1199', 45_001_199)
    lines[1249] = line('TIP-BIG-1249', 45_001_249)
    lines[1299] = line('TIP-BIG-1299', 45_001_299)
    const done = ok(await importar('personal', lines.join('\n'), 'application/x-ndjson'), 201)
    expect(done.creados).toBe(1300)
    const seq = (done.ids as string[]).map((id) => Number(id.split('-')[2]))
    expect(seq).toEqual(seq.map((_, i) => seq[0]! + i)) // one block, in file order
    const last = ok(await admin.get(`/personal/${done.ids[1299] as string}`))
    expect(last).toMatchObject({ tip: 'TIP-BIG-1299', nif: validDni(45_001_299) })
    expect(ok(await admin.get(`/personal/${done.ids[1299] as string}/verificar`)).valido).toBe(true)
    expect(await count('personal')).toBe(before + 1300)
  }, 60_000)

  it('an empty file: 400 Datos requeridos; a bad query: 400', async () => {
    expectError(await importar('denuncias', `${HEADER}\n`, 'text/csv'), 'DATOS_REQUERIDOS')
    expectError(await importar('denuncias', `${HEADER}\n`, 'text/csv', '?simular=si'), 'DATOS_INVALIDOS')
  })
})

describe('refusals', () => {
  it('403 without importar (jefe), before the body is read', async () => {
    const jefe = await newUser(app, token, 'jefe')
    expectError(await importar('denuncias', 'no,es,csv\n"', 'text/csv', '', jefe.token), 'SIN_PERMISOS')
  })

  it('415 for another content type, and CSV on another route', async () => {
    expectError(await call(app, 'POST', '/denuncias/importar', { token, body: { tipo: 'x' } }), 'TIPO_CONTENIDO_NO_SOPORTADO')
    expectError(await importar('denuncias', 'x', 'text/plain'), 'TIPO_CONTENIDO_NO_SOPORTADO')
    expectError(await call(app, 'POST', '/denuncias', { token, raw: `${HEADER}\n`, headers: { 'content-type': 'text/csv' } }), 'TIPO_CONTENIDO_NO_SOPORTADO')
  })

  it('413 over IMPORT_MAX_BYTES, and 1 MiB still bounds every other body', async () => {
    const small = await h.app({ env: { IMPORT_MAX_BYTES: '2000' } })
    const t = await login(small)
    const big = `${HEADER}\n${'Ana;hurto;2026-06-01 10:00:00;Calle;Bien;;;;\n'.repeat(60)}`
    const res = await call(small, 'POST', '/denuncias/importar', { token: t, raw: big, headers: { 'content-type': 'text/csv' } })
    expectError(res, 'PETICION_DEMASIADO_GRANDE')
    // Above 1 MiB is fine for an import (simulated) …
    const large = `${HEADER}\n${'Ana;hurto;2026-06-01 10:00:00;Calle;Bien;;;;\n'.repeat(24_000)}`
    expect(Buffer.byteLength(large)).toBeGreaterThan(1024 * 1024)
    expect(ok(await importar('denuncias', large, 'text/csv', '?simular=true')).validas).toBe(24_000)
    // … never for a POST.
    expectError(await call(app, 'POST', '/denuncias', { token, raw: JSON.stringify({ descripcion: 'x'.repeat(1024 * 1024) }), headers: { 'content-type': 'application/json' } }), 'PETICION_DEMASIADO_GRANDE')
  })
})

describe('npm run import', () => {
  const ROOT = join(import.meta.dirname, '../..')
  let dir: string
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'policia-import-')) })
  afterAll(() => { rmSync(dir, { recursive: true, force: true }) })
  const env = (): Record<string, string | undefined> => testEnv({ dataDir: dir, redisPrefix: h.redisPrefix, ...(h.db.url !== undefined && { databaseUrl: h.db.url }) })
  /** The command line's main function on the test database. */
  async function run (args: string[]): Promise<{ code: number, out: string, err: string }> {
    let out = ''
    let err = ''
    const code = await runImport(args, { env: env(), ...(h.db.embedded !== undefined && { embedded: h.db.embedded }), progress: false, out: (t) => { out += t }, err: (t) => { err += t } })
    return { code, out, err }
  }

  it('imports a good file as the first superadmin, and refuses a bad one whole, by row and field', async () => {
    const good = join(dir, 'buenas.csv')
    writeFileSync(good, `\uFEFF${HEADER}\nAna;hurto;2026-06-01 10:00:00;Calle;Desde la consola;;;;\nLuis;robo;2026-06-01 11:00:00;Calle;Desde la consola;;;;\n`)
    const before = await count('denuncias')
    const dry = await run(['denuncias', good, '--simular'])
    expect(dry, dry.err).toMatchObject({ code: 0 })
    expect(dry.out).toContain('2 rows read, 2 valid, 0 problems')
    expect(await count('denuncias')).toBe(before)
    const done = await run(['denuncias', good])
    expect(done.code, done.err).toBe(0)
    const ids = /(DEN-\d{4}-\d+) to (DEN-\d{4}-\d+)/.exec(done.out)!
    const record = ok(await admin.get(`/denuncias/${ids[2]!}`))
    expect(record).toMatchObject({ denunciante_nombre: 'Luis', descripcion: 'Desde la consola', _created_by: (ok(await admin.get('/me')))._id })
    expect(ok(await admin.get(`/denuncias/${ids[1]!}/verificar`)).valido).toBe(true)
    expect(await count('denuncias')).toBe(before + 2)

    const bad = join(dir, 'malas.ndjson')
    writeFileSync(bad, `${JSON.stringify({ denunciante_nombre: 'Eva', tipo: 'hurto', fecha_hechos: '2026-06-01 10:00:00', lugar_hechos: 'Calle', descripcion: 'Bien' })}\n{"tipo": "robo"}\n`)
    const refused = await run(['denuncias', bad])
    expect(refused.code).toBe(1)
    expect(refused.out).toContain('nothing imported: Datos inválidos')
    expect(refused.out).toContain('fila 2: denunciante_nombre: es obligatorio')
    expect(await count('denuncias')).toBe(before + 2)
  })

  it('--usuario names who creates them (who needs importar); wrong usage: status 2', async () => {
    const jefe = await newUser(app, token, 'jefe')
    const file = join(dir, 'una.csv')
    writeFileSync(file, `${HEADER}\nAna;hurto;2026-06-01 10:00:00;Calle;Bien;;;;\n`)
    const refused = await run(['denuncias', file, '--usuario', jefe.username])
    expect(refused).toMatchObject({ code: 1, out: expect.stringContaining('Sin permisos para esta operación') })
    expect((await run(['denuncias'])).code).toBe(2)
    expect((await run(['nada', file])).code).toBe(2)
    expect((await run(['denuncias', file, '--usuario', 'nadie'])).code).toBe(1)
  })

  it('--codificacion windows-1252 reads what Spanish Excel writes; without it the file is refused by line', async () => {
    const file = join(dir, 'excel.csv')
    writeFileSync(file, Buffer.concat([Buffer.from(`${HEADER}\r\n`), Buffer.from('Jos\xe9 P\xe9rez;hurto;2026-06-01 10:00:00;Calle;', 'latin1'), Buffer.from([0x80]), Buffer.from(' 5;;;;\r\n')]))
    const before = await count('denuncias')
    const refused = await run(['denuncias', file])
    expect(refused.code).toBe(1)
    expect(refused.out).toContain('body: la línea 2 no es texto utf-8 válido')
    expect(await count('denuncias')).toBe(before)
    expect((await run(['denuncias', file, '--codificacion', 'ebcdic'])).code).toBe(2)
    const done = await run(['denuncias', file, '--codificacion', 'windows-1252'])
    expect(done.code, done.err).toBe(0)
    const id = /(DEN-\d{4}-\d+) to/.exec(done.out)![1]!
    expect(ok(await admin.get(`/denuncias/${id}`))).toMatchObject({ denunciante_nombre: 'José Pérez', descripcion: '€ 5' })
  })

  it('runs as a child process too (npm run import --, as in the image)', async () => {
    const exec = promisify(execFile)
    const { stdout } = await exec('npx', ['tsx', 'bin/import.ts', '--help'], { cwd: ROOT })
    expect(stdout).toContain('Exit status')
    if (usingPostgres) {
      const file = join(dir, 'hijo.csv')
      writeFileSync(file, `${HEADER}\nAna;hurto;2026-06-01 10:00:00;Calle;Desde un proceso;;;;\n`)
      const res = await exec('npx', ['tsx', 'bin/import.ts', 'denuncias', file], { cwd: ROOT, env: { ...process.env, ...env() } as NodeJS.ProcessEnv })
      expect(res.stdout).toMatch(/denuncias: 1 records created by admin, DEN-/)
    }
  }, 180_000) // two commands started through npx and tsx
})
