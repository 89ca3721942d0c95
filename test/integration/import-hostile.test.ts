/**
 * Import bodies of every malformed shape (docs/user-guide.md "Import
 * (importar)"): each answers 4xx in the envelope with the line, never 500,
 * and writes nothing; the row limit (IMPORT_MAX_ROWS, 413 `Demasiadas
 * filas`), the header's width, and the declared encodings (windows-1252,
 * iso-8859-1 transcoded; bytes not valid in the encoding refused by line,
 * never stored as U+FFFD). Through HTTP and the database.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Harness } from '../helpers/app.js'
import { login, ok } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

let h: Harness, app: FastifyInstance, token: string
let small: FastifyInstance, smallToken: string

beforeAll(async () => {
  ({ h, app, token } = await startTestApp())
  small = await h.app({ env: { IMPORT_MAX_ROWS: '5' } })
  smallToken = await login(small)
})
afterAll(async () => { await h.close() })

interface Answer { status: number, body: any }

async function importar (body: string | Buffer, type = 'text/csv', query = '', on = app, t = token): Promise<Answer> {
  const res = await on.inject({ method: 'POST', url: `/denuncias/importar${query}`, headers: { authorization: `Bearer ${t}`, 'content-type': type }, payload: body })
  let parsed: unknown
  try { parsed = res.json() } catch { parsed = res.body }
  return { status: res.statusCode, body: parsed }
}

async function counts (): Promise<{ denuncias: number, historial: number }> {
  const rows = await app.orm.em.fork().getConnection().execute<Array<{ d: number, h: number }>>('select (select count(*)::int from "denuncias") as d, (select count(*)::int from "sys_historial") as h')
  return { denuncias: rows[0]!.d, historial: rows[0]!.h }
}

const HEADER = 'denunciante_nombre;tipo;fecha_hechos;lugar_hechos;descripcion'
const ROW = 'Ana Ruiz;hurto;2026-06-01 10:00:00;Calle Mayor;Bien'
const csv = (...rows: string[]): string => [HEADER, ...rows].join('\r\n') + '\r\n'
const ndjson = (...lines: string[]): string => lines.join('\n') + '\n'
const GOOD_LINE = JSON.stringify({ denunciante_nombre: 'Ana', tipo: 'hurto', fecha_hechos: '2026-06-01 10:00:00', lugar_hechos: 'Calle', descripcion: 'Bien' })

/** A 4xx in the envelope, never 500. */
function expectRefusal (res: Answer, name: string): void {
  expect(res.status, `${name}: ${JSON.stringify(res.body).slice(0, 300)}`).toBeGreaterThanOrEqual(400)
  expect(res.status, name).toBeLessThan(500)
  expect(res.body, name).toMatchObject({ success: false, error: expect.any(String), codigo: expect.any(String) })
}

/**
 * A malformed body and its answer: `says`, what its detalles hold (the line
 * named); `row`, for a problem of one row, the row a dry run reports (200
 * with the report, as for any row's problem) and the 400 names.
 */
interface Shape { name: string, body: () => string | Buffer, type?: string, query?: string, status: number, says?: RegExp, row?: number }

const SHAPES: Shape[] = [
  { name: 'a 400,000-column header', body: () => `${'x,'.repeat(399_999)}x\n${ROW}\n`, status: 400, says: /la cabecera tiene 400000 columnas .*sobran: x, x, x, x, x y 399995 más/ },
  { name: 'a 400,000-column header of long names (over a line)', body: () => `${Array.from({ length: 400_000 }, (_, i) => `c${i}`).join(',')}\n${ROW}\n`, status: 400, says: /la línea 1 supera el máximo/ },
  { name: '400,000 empty columns', body: () => `${','.repeat(400_000)}\n`, status: 400, says: /sobran: \(vacía\)/ },
  { name: 'a NUL byte in a cell', body: () => csv(ROW, 'Luis\0;hurto;2026-06-01 10:00:00;Calle;Bien'), status: 400, says: /la línea 3 contiene un byte nulo/ },
  { name: 'UTF-16 (NUL bytes everywhere)', body: () => Buffer.from(`\uFEFF${csv(ROW)}`, 'utf16le'), status: 400, says: /la línea 1 contiene un byte nulo/ },
  { name: 'a NUL byte in an NDJSON line', type: 'application/x-ndjson', body: () => ndjson(GOOD_LINE, GOOD_LINE.replace('Bien', 'Bi\0en')), status: 400, says: /la línea 2 contiene un byte nulo/ },
  { name: 'a quote never closed', body: () => csv(ROW, '"Luis;hurto;2026-06-01 10:00:00;Calle;Bien', ROW), status: 400, says: /CSV mal formado cerca de la línea/ },
  { name: 'a 2 MiB line', body: () => csv(ROW, `${'x'.repeat(2 * 1024 * 1024)};hurto;2026-06-01 10:00:00;Calle;Bien`), status: 400, says: /la línea 3 supera el máximo de 1048576 bytes/ },
  { name: 'a 2 MiB line without an end', body: () => `${HEADER}\n${'x'.repeat(2 * 1024 * 1024)}`, status: 400, says: /la línea 2 supera/ },
  { name: 'a 2 MiB NDJSON line', type: 'application/x-ndjson', body: () => ndjson(GOOD_LINE, JSON.stringify({ descripcion: 'x'.repeat(2 * 1024 * 1024) })), status: 400, says: /la línea 2 supera/ },
  { name: 'a quoted cell of 1.5 MiB over many short lines', body: () => csv(ROW, `Luis;hurto;2026-06-01 10:00:00;Calle;"${'xxxxxxx\n'.repeat(200_000)}"`), status: 400, says: /el registro CSV de la línea \d+ supera el máximo/ },
  { name: 'a BOM in the middle (two files joined)', body: () => `\uFEFF${csv(ROW)}\uFEFF${csv(ROW)}`, status: 400, says: /la línea 3 empieza con una marca de orden de bytes \(BOM\)/ },
  { name: 'a BOM at the start of an NDJSON line', type: 'application/x-ndjson', body: () => ndjson(GOOD_LINE, `\uFEFF${GOOD_LINE}`), status: 400, says: /la línea 2 empieza con una marca/ },
  { name: 'a lone CR inside a row, CRLF and LF mixed', body: () => `${HEADER}\r\n${ROW}\n${ROW.replace('Calle Mayor', 'Calle\rMayor')}\r\n`, status: 400, row: 3 },
  { name: 'an empty body', body: () => '', status: 400 },
  { name: 'only a BOM', body: () => '\uFEFF', status: 400 },
  { name: 'only a header', body: () => `${HEADER}\r\n`, status: 400 },
  { name: 'an empty NDJSON body', type: 'application/x-ndjson', body: () => '\n\n', status: 400 },
  { name: 'invalid UTF-8 in a cell', body: () => Buffer.concat([Buffer.from(csv(ROW)), Buffer.from([0x4a, 0x6f, 0x73, 0xe9, 0x3b]), Buffer.from('hurto;2026-06-01 10:00:00;Calle;Bien\r\n')]), status: 400, says: /la línea 3 no es texto utf-8 válido .*codificacion=windows-1252/ },
  { name: 'a UTF-8 sequence cut by the end of the body', body: () => Buffer.concat([Buffer.from(csv(ROW)), Buffer.from([0xc3])]), status: 400, says: /la línea 3 no es texto utf-8 válido/ },
  { name: 'invalid UTF-8 in NDJSON', type: 'application/x-ndjson', body: () => Buffer.concat([Buffer.from(`${GOOD_LINE}\n{"descripcion":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]), status: 400, says: /la línea 2 no es texto utf-8 válido/ },
  { name: 'a byte windows-1252 does not define', type: 'text/csv; charset=windows-1252', body: () => Buffer.concat([Buffer.from(csv(ROW)), Buffer.from([0x81]), Buffer.from(`${ROW}\r\n`)]), status: 400, says: /la línea 3 no es texto windows-1252 válido/ },
  { name: 'a UTF-8 file declared windows-1252', query: '?codificacion=windows-1252', body: () => `\uFEFF${csv('José;hurto;2026-06-01 10:00:00;Calle;Bien')}`, status: 400, says: /marca de UTF-8/ },
  { name: 'a charset no import reads', type: 'text/csv; charset=utf-16', body: () => csv(ROW), status: 400, says: /utf-8, windows-1252, iso-8859-1, no en utf-16/ },
  { name: 'an unknown codificacion', query: '?codificacion=ebcdic', body: () => csv(ROW), status: 400 },
  { name: '520,000 nested arrays in an NDJSON line', type: 'application/x-ndjson', body: () => ndjson(`{"testigos":${'['.repeat(520_000)}${']'.repeat(520_000)}}`), status: 400, says: /niveles de anidamiento/, row: 1 },
  { name: '60,000 unknown keys in an NDJSON line', type: 'application/x-ndjson', body: () => ndjson(JSON.stringify(Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 0])))), status: 400, says: /como máximo 20000 valores/, row: 1 },
  { name: '19,000 unknown keys in an NDJSON line', type: 'application/x-ndjson', body: () => ndjson(JSON.stringify(Object.fromEntries(Array.from({ length: 19_000 }, (_, i) => [`k${i}`, 0])))), status: 400, row: 1 },
  { name: 'a row of 400,000 cells', body: () => csv(ROW, ';'.repeat(400_000)), status: 400, says: /tiene 400001 columnas y la cabecera 5/, row: 3 },
  { name: '2,000,000 rows of ,,,, (simular)', query: '?simular=true', body: () => `a,b,c,d,e\n${',,,,\n'.repeat(2_000_000)}`, status: 413, says: /como máximo 100000 filas \(IMPORT_MAX_ROWS\)/ },
]

describe('a malformed import answers 4xx with the line, never 500, and writes nothing', () => {
  it.each(SHAPES)('$name', async (shape) => {
    const before = await counts()
    const queries = shape.query?.includes('simular') === true ? [shape.query] : [shape.query ?? '', `${shape.query === undefined ? '?' : `${shape.query}&`}simular=true`]
    for (const query of queries) {
      const res = await importar(shape.body(), shape.type ?? 'text/csv', query)
      if (shape.row !== undefined && query.includes('simular')) {
        // A dry run reports a row's problems with 200.
        expect(res.status, shape.name).toBe(200)
        const errores = res.body.data.errores as Array<{ fila: number }>
        expect(errores.some((e) => e.fila === shape.row), JSON.stringify(errores).slice(0, 300)).toBe(true)
        if (shape.says !== undefined) expect(JSON.stringify(errores), shape.name).toMatch(shape.says)
        continue
      }
      expectRefusal(res, shape.name)
      expect(res.status, shape.name).toBe(shape.status)
      if (shape.says !== undefined) expect(JSON.stringify(res.body.detalles), shape.name).toMatch(shape.says)
      if (shape.row !== undefined) expect((res.body.detalles as Array<{ campo: string }>).some((d) => d.campo.startsWith(`fila ${shape.row}`)), shape.name).toBe(true)
      // A refusal names a few things, never one per column or byte.
      expect((res.body.detalles ?? []).length, shape.name).toBeLessThanOrEqual(1000)
    }
    expect(await counts()).toEqual(before)
  }, 60_000)

  it('any mix of separators, quotes, line breaks, NUL, BOM and stray bytes: 2xx or 4xx in the envelope, never 500; a refusal writes nothing', async () => {
    const piece = fc.constantFrom(';', ',', '"', '""', '\r', '\n', '\r\n', '\0', '\uFEFF', 'á', '€', 'Ana', 'hurto', '2026-06-01 10:00:00', '{', '[', ']', '}', ':', '\\', "'=", '\uFFFD')
    const stray = fc.constantFrom(0x80, 0x81, 0xc3, 0xe9, 0xff, 0xfe, 0xed)
    const body = fc.tuple(fc.array(piece, { maxLength: 60 }), fc.option(fc.tuple(fc.nat(60), stray), { nil: undefined }))
      .map(([parts, bad]) => {
        const text = Buffer.from([HEADER, '\r\n', ...parts].join(''))
        if (bad === undefined) return text
        const at = Math.min(bad[0] + HEADER.length, text.length)
        return Buffer.concat([text.subarray(0, at), Buffer.from([bad[1]]), text.subarray(at)])
      })
    const type = fc.constantFrom('text/csv', 'text/csv; charset=windows-1252', 'text/csv; charset=iso-8859-1', 'application/x-ndjson')
    await fc.assert(fc.asyncProperty(body, type, async (b, t) => {
      const before = await counts()
      const res = await importar(b, t)
      expect(res.status, JSON.stringify(res.body)).not.toBe(500)
      expect(res.status).toBeLessThan(500)
      if (res.status >= 400) {
        expectRefusal(res, 'generated')
        expect(await counts()).toEqual(before)
      }
    }), { numRuns: 150 })
  }, 120_000)
})

describe('the limits', () => {
  it('IMPORT_MAX_ROWS: one row more is 413 Demasiadas filas naming the limit; at the limit it imports', async () => {
    const before = await counts()
    const six = csv(...Array.from({ length: 6 }, () => ROW))
    for (const query of ['', '?simular=true']) {
      const res = await importar(six, 'text/csv', query, small, smallToken)
      expectError(res, 'DEMASIADAS_FILAS')
      expect(res.body.detalles).toEqual([{ campo: 'body', mensaje: 'una importación admite como máximo 5 filas (IMPORT_MAX_ROWS); divida el fichero' }])
    }
    expect(await counts()).toEqual(before)
    const five = csv(...Array.from({ length: 5 }, () => ROW))
    expect(ok(await importar(five, 'text/csv', '', small, smallToken), 201).creados).toBe(5)
    // Blank lines and the header are no rows.
    expect(ok(await importar(`${five}\r\n\r\n`, 'text/csv', '?simular=true', small, smallToken)).filas).toBe(5)
  })

  it('an export\'s own columns are within the width: a header with every field and system column reads', async () => {
    const exported = await app.inject({ method: 'GET', url: '/denuncias/exportar?formato=csv', headers: { authorization: `Bearer ${token}` } })
    expect(exported.statusCode).toBe(200)
    const header = exported.body.replace(/^\uFEFF/, '').split('\r\n')[0]!
    const res = await importar(`${header}\r\n${ROW.replace(/;/g, ',')}\r\n`, 'text/csv', '?simular=true&separador=,')
    // No complaint about the columns: only the row's own problems (its cells do not line up with the header).
    expect(res.status).toBe(200)
    expect(res.body.data.errores.filter((e: { fila: number }) => e.fila === 1)).toEqual([])
  })

  it('a file with a problem in every row lists 1,000 and counts the rest', async () => {
    const report = ok(await importar(csv(...Array.from({ length: 3000 }, () => ';;;;')), 'text/csv', '?simular=true'))
    expect(report.filas).toBe(3000)
    expect(report.validas).toBe(0)
    expect(report.errores).toHaveLength(1000)
    expect(report.errores[0].fila).toBe(2)
    expect(report.errores.map((e: { fila: number }) => e.fila)).toEqual([...report.errores.map((e: { fila: number }) => e.fila)].sort((a, b) => a - b))
    expect(report.errores_omitidos).toBeGreaterThan(0)
  })
})

describe('encodings', () => {
  /** `José Pérez`, `Calle Ñandú` and `€ 5` in one-byte encodings. */
  const latin = (euro: number): Buffer => Buffer.concat([
    Buffer.from(`${HEADER}\r\n`),
    Buffer.from('Jos\xe9 P\xe9rez;hurto;2026-06-01 10:00:00;Calle \xd1and\xfa;', 'latin1'), Buffer.from([euro]), Buffer.from(' 5\r\n'),
  ])

  it('windows-1252 by charset or codificacion, iso-8859-1 (read as windows-1252): transcoded and stored as the text it is', async () => {
    for (const [body, type, query, euro] of [
      [latin(0x80), 'text/csv; charset=windows-1252', '', '€'],
      [latin(0x80), 'text/csv', '?codificacion=windows-1252', '€'],
      [latin(0xa4), 'text/csv; charset="ISO-8859-1"', '', '¤'],
      [latin(0xa4), 'text/csv; charset=utf-8', '?codificacion=iso-8859-1', '¤'],
      // Labelled iso-8859-1, Excel's € (0x80) is still €, as browsers read it: never a C1 control character.
      [latin(0x80), 'text/csv; charset=iso-8859-1', '', '€'],
    ] as const) {
      const data = ok(await importar(body, type, query), 201)
      const record = ok(await app.inject({ method: 'GET', url: `/denuncias/${data.ids[0] as string}`, headers: { authorization: `Bearer ${token}` } }).then((r) => ({ status: r.statusCode, body: r.json() })))
      expect(record).toMatchObject({ denunciante_nombre: 'José Pérez', lugar_hechos: 'Calle Ñandú', descripcion: `${euro} 5` })
    }
    const nd = Buffer.concat([Buffer.from('{"denunciante_nombre":"Jos'), Buffer.from([0xe9]), Buffer.from('","tipo":"hurto","fecha_hechos":"2026-06-01 10:00:00","lugar_hechos":"Calle","descripcion":"Bien"}\n')])
    const data = ok(await importar(nd, 'application/x-ndjson; charset=windows-1252'), 201)
    const record = (await app.inject({ method: 'GET', url: `/denuncias/${data.ids[0] as string}`, headers: { authorization: `Bearer ${token}` } })).json()
    expect(record.data.denunciante_nombre).toBe('José')
  })

  it('Latin-1 bytes sent as UTF-8 (no charset): 400 naming the line, nothing stored with U+FFFD', async () => {
    const before = await counts()
    const res = await importar(latin(0x80), 'text/csv')
    expectError(res, 'DATOS_INVALIDOS')
    expect(res.body.detalles).toEqual([{ campo: 'body', mensaje: expect.stringMatching(/^la línea 2 no es texto utf-8 válido/) }])
    expect(await counts()).toEqual(before)
    const replaced = await app.orm.em.fork().getConnection().execute<Array<{ n: number }>>("select count(*)::int as n from denuncias where denunciante_nombre like '%' || chr(65533) || '%'")
    expect(replaced[0]!.n).toBe(0)
  })

  it('a U+FFFD that is in the UTF-8 input is kept', async () => {
    const data = ok(await importar(csv('Ana \uFFFD;hurto;2026-06-01 10:00:00;Calle;Bien'), 'text/csv'), 201)
    const record = (await app.inject({ method: 'GET', url: `/denuncias/${data.ids[0] as string}`, headers: { authorization: `Bearer ${token}` } })).json()
    expect(record.data.denunciante_nombre).toBe('Ana \uFFFD')
  })

  it('CRLF and LF mixed in one file read as the same rows', async () => {
    const data = ok(await importar(`${HEADER}\r\n${ROW}\n${ROW.replace('Ana', 'Eva')}\r\n\n${ROW.replace('Ana', 'Luis')}`, 'text/csv'), 201)
    expect(data.creados).toBe(3)
  })
})
