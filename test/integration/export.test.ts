/**
 * GET /{module}/exportar (docs/user-guide.md "Export (exportar)"): the exact
 * CSV and NDJSON of a small data set (byte-order mark, header, separator,
 * quoting, the formula prefix on text but not on negative numbers, arrays
 * as JSON, date-times as the API shows them), every record past the list's
 * 1000, the list's filters, search and order, the permission and the
 * row-level scope, encrypted values withheld or decrypted with their read
 * log, bad parameters, and (PostgreSQL) a client that goes away mid-way:
 * the cursor, the transaction and the connection are given back.
 */
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { parseRegistry } from '../../core/registry/load.js'
import type { Harness } from '../helpers/app.js'
import { edit } from '../helpers/edit-text.js'
import { expectError } from '../helpers/errors.js'
import { call, client, ok, validDni, type Api, type Res } from '../helpers/http.js'
import { usingPostgres } from '../helpers/services.js'
import { queriesOf } from '../helpers/sql-capture.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'
import { listenApp } from '../helpers/free-port.js'

type Rec = Record<string, any>

// Two roles for this file: `exportador` exports every record it sees but
// decrypts nothing; `propio` sees everything and exports only its own. A
// signed integer field shows a negative number in a CSV.
const ROLE_ENUM = 'enum: [superadmin, administrador, jefe, oficial, agente, delegado_proteccion_datos, consulta]'
let text = readFileSync('modules.yaml', 'utf8')
text = edit(text, '\nmodules:\n', `
  exportador:
    permissions: ['denuncias.ver', 'denuncias.crear', 'denuncias.exportar']
  propio:
    permissions: ['denuncias.ver', 'denuncias.crear', 'denuncias.exportar:propios', 'denuncias.descifrar']

modules:
`)
text = edit(text, ROLE_ENUM, ROLE_ENUM.replace('consulta]', 'consulta, exportador, propio]'))
text = edit(text, '\n      prioridad:', '\n      saldo: { type: integer, label: Saldo }\n      prioridad:')
// A plain array to export (the default declares adjuntos as files, which a body cannot invent).
text = edit(text, '      adjuntos: { type: file,', '      adjuntos: { type: array,')
const registry = parseRegistry(text, 'modules.yaml (+ exportador, propio, saldo)')

const HEADER = ['_id', 'denunciante_nombre', 'denunciante_dni', 'denunciante_telefono', 'denunciante_email', 'denunciante_domicilio', 'tipo', 'fecha_hechos',
  'lugar_hechos', 'descripcion', 'testigos', 'estado', 'agente_asignado', 'saldo', 'prioridad', 'adjuntos', 'observaciones',
  '_created', '_created_by', '_modified', '_modified_by', '_version', '_hash', '_deleted']
const ENCRYPTED = ['denunciante_dni', 'denunciante_telefono', 'denunciante_domicilio']
/** What a caller without descifrar is denied: the encrypted fields and the encrypted sub-fields of the witnesses. */
const RESTRICTED = [...ENCRYPTED, 'testigos.dni', 'testigos.telefono', 'testigos.domicilio']

let h: Harness, app: FastifyInstance, token: string, admin: Api
let jefe: Api, exportador: Api, propio: { id: string, api: Api }

/** Two records whose cells need every rule: quotes, separators, line breaks, formulas, arrays, a negative number. */
const TRICKY = {
  denunciante_nombre: 'Pérez, "Juan"',
  denunciante_dni: validDni(12345678),
  denunciante_telefono: '+34 600 000 000',
  tipo: '=HYPERLINK("http://x")',
  fecha_hechos: '2026-06-01T10:00:00Z',
  lugar_hechos: 'Calle Mayor 1\nBajo; izquierda',
  descripcion: '-robo de cartera',
  saldo: -5,
  prioridad: 'alta',
  adjuntos: ['a.pdf', { hoja: 2 }],
}
const PLAIN = { denunciante_nombre: 'Ana', tipo: 'hurto', fecha_hechos: '2026-06-02 09:30:00', lugar_hechos: '@plaza', descripcion: '\tTabulado', saldo: 7 }
let tricky: Rec, plain: Rec

async function exportOf (api: Api, query: string): Promise<Res & { text: string }> {
  const res = await api.get(`/denuncias/exportar${query}`)
  const raw = typeof res.body === 'string' ? res.body : JSON.stringify(res.body)
  return { ...res, text: raw }
}

/** A cell as the export must write it, restated here: RFC 4180 quoting, the formula prefix on text only. */
function cell (v: unknown, sep: string): string {
  if (v === null || v === undefined) return ''
  let s = typeof v === 'object' ? JSON.stringify(v) : String(v)
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`
  return s.includes(sep) || /["\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}
const csvOf = (header: string[], recs: Rec[], sep = ','): string =>
  '\ufeff' + [header, ...recs.map((r) => header.map((k) => r[k]))].map((row, i) => row.map((v) => i === 0 ? v : cell(v, sep)).join(sep)).join('\r\n') + '\r\n'

/** Data lines of a CSV (no header), for counting: the bulk rows have no line breaks in them. */
const dataLines = (csv: string): string[] => csv.split('\r\n').slice(1, -1)

beforeAll(async () => {
  ({ h, app, token, admin } = await startTestApp({ registry }))
  jefe = client(app, (await newUser(app, token, 'jefe')).token)
  exportador = client(app, (await newUser(app, token, 'exportador')).token)
  const p = await newUser(app, token, 'propio')
  propio = { id: p.id, api: client(app, p.token) }
  tricky = ok(await admin.post('/denuncias', TRICKY), 201)
  plain = ok(await admin.post('/denuncias', PLAIN), 201)
  // 1500 more, straight into the table (the export does not check seals), in one statement.
  const adminId = tricky._created_by as string
  await h.db.query(`
    insert into denuncias ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash", "_deleted",
                           denunciante_nombre, tipo, fecha_hechos, lugar_hechos, descripcion, estado, prioridad, saldo)
    select 'DEN-1990-' || lpad(i::text, 5, '0'), timestamptz '2026-01-01 00:00:00+00' + i * interval '1 minute', $1, now(), $1, 1, repeat('0', 64), null,
           'Lote ' || i, 'lote', timestamptz '2026-01-01 00:00:00+00', 'Calle ' || (i % 10), 'Denuncia del lote ' || i, 'pendiente',
           (array['baja', 'media', 'alta', 'urgente'])[1 + i % 4], i
    from generate_series(1, 1500) as i`, [adminId])
})

afterAll(async () => { await h.close() })

describe('content', () => {
  it('CSV: byte-order mark, header, quoting, the formula prefix on text only, arrays as JSON, date-times as the API shows them', async () => {
    const res = await exportOf(jefe, '?tipo[ne]=lote&sort=_id')
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    const today = new Intl.DateTimeFormat('sv-SE', { timeZone: 'Europe/Madrid' }).format(new Date())
    expect(res.headers['content-disposition']).toBe(`attachment; filename="denuncias-${today}.csv"`)
    const shown = [ok(await jefe.get(`/denuncias/${tricky._id as string}`)), ok(await jefe.get(`/denuncias/${plain._id as string}`))]
    expect(res.text).toBe(csvOf(HEADER, shown))
    // The rules, written out once by hand.
    const line = res.text.slice(1).split('\r\n').slice(1).join('\r\n')
    expect(line).toContain('"Pérez, ""Juan"""')
    expect(line).toContain('"\'=HYPERLINK(""http://x"")"')
    expect(line).toContain(',2026-06-01 12:00:00,"Calle Mayor 1\nBajo; izquierda",\'-robo de cartera,')
    expect(line).toContain(',-5,alta,"[""a.pdf"",{""hoja"":2}]",')
    expect(line).toContain(`,'@plaza,'\tTabulado,`)
  })

  it('CSV with separador=; (spreadsheets set to Spanish)', async () => {
    const res = await exportOf(jefe, '?tipo[ne]=lote&sort=_id&separador=%3B')
    const shown = [ok(await jefe.get(`/denuncias/${tricky._id as string}`)), ok(await jefe.get(`/denuncias/${plain._id as string}`))]
    expect(res.text).toBe(csvOf(HEADER, shown, ';'))
    expect(res.text).toContain(';"Calle Mayor 1\nBajo; izquierda";')
    expect(res.text).toContain(';"Pérez, ""Juan""";')
  })

  it('NDJSON: one API record per line', async () => {
    const res = await exportOf(jefe, '?formato=ndjson&tipo[ne]=lote&sort=-_id')
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('application/x-ndjson')
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="denuncias-\d{4}-\d{2}-\d{2}\.ndjson"$/)
    expect(res.text.endsWith('\n')).toBe(true)
    const lines = res.text.slice(0, -1).split('\n').map((l) => JSON.parse(l))
    expect(lines).toEqual([ok(await jefe.get(`/denuncias/${plain._id as string}`)), ok(await jefe.get(`/denuncias/${tricky._id as string}`))])
    expect(lines[1].saldo).toBe(-5)
  })
})

describe('every matching record, the list\'s filters, search and order', () => {
  it('exports all 1500 records of a filter, past the list\'s 1000', async () => {
    const lines = dataLines((await exportOf(admin, '?tipo=lote')).text)
    expect(lines).toHaveLength(1500)
    expect(new Set(lines.map((l) => l.split(',')[0])).size).toBe(1500)
    const nd = (await exportOf(admin, '?tipo=lote&formato=ndjson')).text.trim().split('\n')
    expect(nd).toHaveLength(1500)
  })

  it('filters with operators, the default order and sort', async () => {
    const alta = dataLines((await exportOf(admin, '?tipo=lote&prioridad=alta&saldo[lte]=100')).text)
    // i % 4 = 2 for i ≤ 100: 2, 6, …, 98.
    expect(alta).toHaveLength(25)
    // Default order: newest first.
    expect(alta.map((l) => l.split(',')[0])).toEqual(Array.from({ length: 25 }, (_, k) => `DEN-1990-${String(98 - 4 * k).padStart(5, '0')}`))
    const bySaldo = (await exportOf(admin, '?tipo=lote&prioridad[in]=baja,urgente&sort=saldo&formato=ndjson')).text.trim().split('\n').map((l) => JSON.parse(l))
    expect(bySaldo).toHaveLength(750)
    expect(bySaldo.map((r) => r.saldo)).toEqual([...bySaldo.map((r) => r.saldo)].sort((a, b) => a - b))
    expect(new Set(bySaldo.map((r) => r.prioridad))).toEqual(new Set(['baja', 'urgente']))
  })

  it('an o[N] group: a record matches any of its conditions', async () => {
    const lines = (await exportOf(admin, '?tipo=lote&o[1][prioridad]=baja&o[1][saldo][lte]=3&formato=ndjson')).text.trim().split('\n').map((l) => JSON.parse(l))
    // Lote i has saldo i and prioridad baja when i is a multiple of 4: 375 of them, and 1, 2, 3.
    expect(lines).toHaveLength(378)
    for (const r of lines) expect(r.prioridad === 'baja' || r.saldo <= 3).toBe(true)
  })

  it('full-text search q', async () => {
    const found = (await exportOf(admin, '?q=mayor&formato=ndjson')).text.trim().split('\n').map((l) => JSON.parse(l)._id)
    expect(found).toEqual([tricky._id])
  })
})

describe('permission and scope', () => {
  it('403 without exportar (oficial, consulta, agente), before any 400; 401 without a token', async () => {
    for (const rol of ['oficial', 'consulta', 'agente']) {
      const api = client(app, (await newUser(app, token, rol)).token)
      expectError(await api.get('/denuncias/exportar'), 'SIN_PERMISOS')
      expectError(await api.get('/denuncias/exportar?formato=xml'), 'SIN_PERMISOS')
    }
    expectError(await client(app).get('/denuncias/exportar'), 'TOKEN_NO_PROPORCIONADO')
  })

  it('exportar:propios exports only the caller\'s own records', async () => {
    const own = ok(await propio.api.post('/denuncias', { ...PLAIN, denunciante_nombre: 'Propia', denunciante_dni: validDni(5) }), 201)
    // The list shows every record; the export only the own one.
    expect(ok(await propio.api.get('/denuncias?tipo=hurto')).total).toBe(2)
    const lines = (await exportOf(propio.api, '?formato=ndjson')).text.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines).toEqual([ok(await propio.api.get(`/denuncias/${own._id as string}`))])
    expect(lines[0].denunciante_dni).toBe(validDni(5))
    ok(await admin.del(`/denuncias/${own._id as string}`))
  })
})

describe('campos', () => {
  const lecturas = async (query: string): Promise<Rec[]> => ok(await admin.get(`/auditoria/lecturas?${query}&limit=1000`)).records
  const ndjson = (text: string): Rec[] => text.trim().split('\n').map((l) => JSON.parse(l))

  it('the header and keys are _id and the named fields in record order; each record as a GET by id with the same campos shows it', async () => {
    const campos = '_version,saldo,tipo'
    const res = await exportOf(admin, `?tipo[ne]=lote&sort=_id&campos=${campos}`)
    const lines = ndjson((await exportOf(admin, `?tipo[ne]=lote&sort=_id&campos=${campos}&formato=ndjson`)).text)
    expect(lines.length).toBe(ok(await admin.get('/denuncias?tipo[ne]=lote&limit=1')).total)
    const shown = await Promise.all(lines.map(async (l) => ok(await admin.get(`/denuncias/${l._id as string}?campos=${campos}`))))
    expect(lines).toEqual(shown)
    expect(Object.keys(lines[0]!)).toEqual(['_id', 'tipo', 'saldo', '_version'])
    expect(res.text).toBe(csvOf(['_id', 'tipo', 'saldo', '_version'], shown))
  })

  it('the cursor reads only the named columns (and the order\'s)', async () => {
    const sent = await queriesOf(app.orm.em, async () => {
      expect(dataLines((await exportOf(admin, '?tipo=lote&campos=tipo&sort=saldo')).text)).toHaveLength(1500)
    })
    const reads = sent.filter((q) => /select .* from "denuncias"/s.test(q.sql))
    expect(reads.length).toBeGreaterThan(0)
    // A superadmin exports blocked records too: whether each is blocked is read with it (docs/decisions.md "Blocking personal data is access, not a version").
    for (const q of reads) {
      expect(q.sql).toMatch(/^(declare export_rows no scroll cursor for )?select "_id", "tipo", "saldo", "_bloqueado" from "denuncias"/)
    }
  })

  it('a campos naming no encrypted field writes no read-log entry, even for a caller who may decrypt', async () => {
    const before = (await lecturas('modulo=denuncias')).length
    const res = await exportOf(jefe, '?tipo[ne]=lote&campos=tipo,estado')
    expect(res.text.slice(1).split('\r\n')[0]).toBe('_id,tipo,estado')
    expect(dataLines(res.text).length).toBeGreaterThan(1)
    expect((await lecturas('modulo=denuncias')).length).toBe(before)
  })

  it('only the named encrypted fields are decrypted and logged; without descifrar only they are withheld', async () => {
    const query = `?tipo[ne]=lote&denunciante_dni=${TRICKY.denunciante_dni}&campos=tipo,denunciante_telefono`
    const before = new Set((await lecturas('modulo=denuncias')).map((e) => JSON.stringify(e)))
    const res = await exportOf(jefe, query)
    expect(res.text).toBe(csvOf(['_id', 'denunciante_telefono', 'tipo'], [{ _id: tricky._id, tipo: TRICKY.tipo, denunciante_telefono: TRICKY.denunciante_telefono }]))
    const added = (await lecturas('modulo=denuncias')).filter((e) => !before.has(JSON.stringify(e)))
    expect(added.map((e) => [e.tipo, e.registro, e.campos]).sort()).toEqual([['exportar', null, ['denunciante_telefono']], ['lectura', tricky._id, ['denunciante_telefono']]].sort())
    const withheld = ndjson((await exportOf(exportador, '?tipo[ne]=lote&sort=_id&campos=tipo,denunciante_telefono&formato=ndjson')).text)
    expect(withheld.find((r) => r._id === tricky._id)).toEqual({ _id: tricky._id, tipo: TRICKY.tipo, _restringidos: ['denunciante_telefono'] })
    const csv = await exportOf(exportador, '?tipo[ne]=lote&sort=_id&campos=tipo,denunciante_telefono')
    expect(csv.text.slice(1).split('\r\n')[0]).toBe('_id,denunciante_telefono,tipo,_restringidos')
    expect(csv.text).not.toContain('600 000 000')
  })

  it('400 for an unknown field (with a hint), a related record\'s field and expandir', async () => {
    const bad = async (query: string, campo: string, text: RegExp): Promise<void> => {
      const res = await jefe.get(`/denuncias/exportar${query}`)
      expectError(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles).toEqual([{ campo, mensaje: expect.stringMatching(text) }])
    }
    await bad('?campos=tipo,estdo', 'campos', /desconocido "estdo".*¿quería decir "estado"/)
    await bad('?campos=agente_asignado.nombre', 'campos', /"agente_asignado.nombre": una exportación no incluye campos de registros relacionados/)
    await bad('?expandir=agente_asignado', 'expandir', /no expande referencias/)
    await bad('?campos=', 'campos', /lista de campos/)
  })
})

describe('encrypted fields and the read log', () => {
  const lecturas = async (query: string): Promise<Rec[]> => ok(await admin.get(`/auditoria/lecturas?${query}`)).records

  it('without descifrar: the columns stay, their cells empty, _restringidos names them; nothing is logged', async () => {
    const before = (await lecturas('limit=1000')).length
    const res = await exportOf(exportador, '?tipo[ne]=lote&sort=_id')
    const shown = [ok(await exportador.get(`/denuncias/${tricky._id as string}`)), ok(await exportador.get(`/denuncias/${plain._id as string}`))]
    expect(shown[0]._restringidos).toEqual(RESTRICTED)
    expect(res.text).toBe(csvOf([...HEADER, '_restringidos'], shown))
    expect(res.text).not.toContain(TRICKY.denunciante_dni)
    const nd = (await exportOf(exportador, '?tipo[ne]=lote&sort=_id&formato=ndjson')).text.trim().split('\n').map((l) => JSON.parse(l))
    expect(nd).toEqual(shown)
    expect((await lecturas('limit=1000')).length).toBe(before)
  })

  it('with descifrar: the values, one exportar entry with the filter (encrypted values masked) and one lectura per record that left decrypted', async () => {
    const res = await exportOf(jefe, `?tipo[ne]=lote&denunciante_dni=${TRICKY.denunciante_dni}`)
    expect(dataLines(res.text)).toHaveLength(1)
    expect(res.text).toContain(`,${TRICKY.denunciante_dni},'+34 600 000 000,`)
    const entry = (await lecturas('tipo=exportar&limit=1'))[0]!
    expect(entry).toMatchObject({ tipo: 'exportar', modulo: 'denuncias', registro: null, campos: RESTRICTED, ruta: 'GET /denuncias/exportar', filtro: 'tipo%5Bne%5D=lote&denunciante_dni=*' })
    expect(JSON.stringify(await lecturas('tipo=exportar'))).not.toContain(TRICKY.denunciante_dni)
    const reads = await lecturas(`tipo=lectura&registro=${tricky._id as string}`)
    expect(reads[0]).toMatchObject({ usuario: entry.usuario, ruta: 'GET /denuncias/exportar', campos: ['denunciante_dni', 'denunciante_telefono'] })
  })

  it('a bulk export logs its decrypted records in one insert per batch of 500, not one per record', async () => {
    // Encrypted as the service would (the record id and field bound in), straight into the table.
    const ids = Array.from({ length: 600 }, (_, i) => `DEN-1992-${String(i + 1).padStart(5, '0')}`)
    const dnis = ids.map((id, i) => app.cipher.encrypt(validDni(i), id, 'denunciante_dni'))
    await h.db.query(`
      insert into denuncias ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash", "_deleted",
                             denunciante_nombre, denunciante_dni, tipo, fecha_hechos, lugar_hechos, descripcion)
      select id, now(), 'USR-2026-00001', now(), 'USR-2026-00001', 1, repeat('0', 64), null, 'Cifrada', dni, 'cifrada', now(), 'Calle', 'Texto'
      from unnest($1::text[], $2::text[]) as t(id, dni)`, [ids, dnis])
    const sent = await queriesOf(app.orm.em, async () => {
      const csv = (await exportOf(jefe, '?tipo=cifrada&sort=_id')).text
      expect(dataLines(csv)).toHaveLength(600)
      expect(dataLines(csv)[599]).toContain(`,${validDni(599)},`)
    })
    // The export's own entry, then one insert per batch (500 + 100 records).
    expect(sent.filter((q) => /^insert into "sys_lecturas"/.test(q.sql))).toHaveLength(3)
    const rows = await h.db.query<{ n: number }>("select count(*)::int as n from sys_lecturas l join denuncias d on d._id = l.registro where d.tipo = 'cifrada' and l.ruta = 'GET /denuncias/exportar'")
    expect(rows[0]!.n).toBe(600)
  })
})

describe('structured arrays: the witnesses\' encrypted sub-fields', () => {
  const WITH_WITNESSES = [
    { denunciante_nombre: 'Testigos 1', tipo: 'con-testigos', fecha_hechos: '2026-06-03 10:00:00', lugar_hechos: 'Plaza', descripcion: 'Con dos testigos',
      testigos: [{ nombre: 'Rosa', dni: validDni(33_000_001), telefono: '+34 611 111 111', domicilio: 'Calle Sol 1' }, { nombre: 'Pablo', dni: validDni(33_000_002) }] },
    { denunciante_nombre: 'Testigos 2', tipo: 'con-testigos', fecha_hechos: '2026-06-04 10:00:00', lugar_hechos: 'Puerto', descripcion: 'Un testigo; sin DNI',
      testigos: [{ nombre: 'Lola', telefono: '600 222 333' }], prioridad: 'baja' },
  ]
  const userKeys = (r: Rec): Rec => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('_')))

  it('CSV with descifrar: the sub-fields decrypted, the read log names testigos.dni …; without: withheld from every item', async () => {
    for (const body of WITH_WITNESSES) ok(await admin.post('/denuncias', body), 201)
    const csv = (await exportOf(jefe, '?tipo=con-testigos&sort=_id')).text
    const lines = dataLines(csv)
    expect(lines).toHaveLength(2)
    expect(csv).toContain(validDni(33_000_001))
    expect(csv).toContain('Calle Sol 1')
    // As the list shows them.
    const shown = ok(await jefe.get('/denuncias?tipo=con-testigos&sort=_id')).records as Rec[]
    expect((await exportOf(jefe, '?tipo=con-testigos&sort=_id&formato=ndjson')).text.trim().split('\n').map((l) => JSON.parse(l))).toEqual(shown)
    expect(csv.slice(1).split('\r\n')[0]).toBe(HEADER.join(','))
    const entry = ok(await admin.get('/auditoria/lecturas?tipo=exportar&limit=1')).records[0]
    expect(entry.campos).toEqual(RESTRICTED)
    const reads = ok(await admin.get(`/auditoria/lecturas?tipo=lectura&registro=${shown[0]!._id as string}&limit=1000`)).records as Rec[]
    expect(reads.some((e) => e.ruta === 'GET /denuncias/exportar' && JSON.stringify(e.campos) === JSON.stringify(['testigos.dni', 'testigos.telefono', 'testigos.domicilio']))).toBe(true)

    const withheld = await exportOf(exportador, '?tipo=con-testigos&sort=_id')
    expect(withheld.text).not.toContain(validDni(33_000_001))
    expect(withheld.text).not.toContain('Calle Sol 1')
    expect(withheld.text).not.toContain('611 111 111')
    const nd = (await exportOf(exportador, '?tipo=con-testigos&sort=_id&formato=ndjson')).text.trim().split('\n').map((l) => JSON.parse(l))
    expect(nd[0].testigos).toEqual([{ nombre: 'Rosa' }, { nombre: 'Pablo' }])
    expect(nd[0]._restringidos).toEqual(RESTRICTED)
  })

  it('an item\'s keys in declared order, as a GET shows them (CSV and NDJSON), not in the order jsonb keeps them', async () => {
    const witness = { declaracion: 'Vio el coche', domicilio: 'Calle Luna 2', telefono: '600 333 444', dni: validDni(33_000_003), nombre: 'Marta' }
    const created = ok(await admin.post('/denuncias', { ...WITH_WITNESSES[1], tipo: 'orden-testigos', testigos: [witness] }), 201)
    // jsonb keeps shorter keys first: what the export wrote before.
    const stored = await h.db.query<{ keys: string[] }>('select array(select jsonb_object_keys(testigos->0)) as keys from denuncias where "_id" = $1', [created._id])
    expect(stored[0]!.keys[0]).toBe('dni')
    const declared = ['nombre', 'dni', 'telefono', 'domicilio', 'declaracion']
    const shown = ok(await jefe.get(`/denuncias/${created._id as string}`))
    expect(Object.keys(shown.testigos[0])).toEqual(declared)
    const nd = (await exportOf(jefe, '?tipo=orden-testigos&formato=ndjson')).text.trim().split('\n').map((l) => JSON.parse(l))
    expect(Object.keys(nd[0].testigos[0])).toEqual(declared)
    expect(nd[0].testigos).toEqual(shown.testigos)
    const csv = (await exportOf(jefe, '?tipo=orden-testigos')).text
    expect(csv).toContain(`,"${JSON.stringify(shown.testigos).replaceAll('"', '""')}",`)
  })

  it('the CSV an admin exported imports again as equal records (the _ columns aside)', async () => {
    const csv = (await exportOf(admin, '?tipo=con-testigos&sort=_id')).text
    const before = ok(await admin.get('/denuncias?tipo=con-testigos&sort=_id')).records as Rec[]
    const res = await call(app, 'POST', '/denuncias/importar', { token, raw: csv, headers: { 'content-type': 'text/csv' } })
    const created = ok(res, 201).ids as string[]
    expect(created).toHaveLength(2)
    const after = await Promise.all(created.map(async (id) => ok(await admin.get(`/denuncias/${id}`))))
    expect(after.map(userKeys)).toEqual(before.map(userKeys))
    expect(after[0]!.testigos[0]).toEqual(WITH_WITNESSES[0]!.testigos[0])
    // Stored encrypted again, like a POST's.
    const stored = await h.db.query<{ t: string }>('select testigos::text as t from denuncias where "_id" = $1', [created[0]])
    expect(stored[0]!.t).not.toContain(validDni(33_000_001))
    expect(stored[0]!.t).toContain('Rosa')
  })
})

describe('bad parameters', () => {
  it('400 naming formato, separador, limit and offset', async () => {
    const bad = async (query: string, campo: string): Promise<void> => {
      const res = await jefe.get(`/denuncias/exportar${query}`)
      expectError(res, 'DATOS_INVALIDOS')
      expect(res.body.detalles[0].campo).toBe(campo)
    }
    await bad('?formato=xlsx', 'formato')
    await bad('?separador=%7C', 'separador')
    await bad('?formato=ndjson&separador=%3B', 'separador')
    await bad('?limit=10', 'limit')
    await bad('?offset=10', 'offset')
    await bad('?color=rojo', 'color')
    await bad('?sort=descripcion', 'sort')
  })

  it('/exportar is not taken for a record id: a PUT there is a method the path does not have', async () => {
    const res = await jefe.put('/denuncias/exportar', { tipo: 'x' })
    expectError(res, 'METODO_NO_PERMITIDO')
    expect(res.headers?.allow).toBe('GET, HEAD')
  })
})

if (usingPostgres) {
  describe('a client that goes away (PostgreSQL)', () => {
    const exportSessions = async (): Promise<Rec[]> => h.db.query(
      "select state, query from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and (query ilike 'fetch%' or query ilike 'declare%' or state like 'idle in transaction%')")
    const pool = (): { numUsed (): number } => (app.orm.em.getConnection() as any).getKnex().client.pool

    it('stops the query: cursor closed, transaction ended, connection back in the pool', async () => {
      // Enough to fill every buffer between the server and a client that stops reading.
      await h.db.query(`
        insert into denuncias ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash", "_deleted",
                               denunciante_nombre, tipo, fecha_hechos, lugar_hechos, descripcion)
        select 'DEN-1991-' || lpad(i::text, 5, '0'), now(), 'USR-2026-00001', now(), 'USR-2026-00001', 1, repeat('0', 64), null,
               'Masiva ' || i, 'masiva', now(), 'Calle', repeat('texto largo ', 150)
        from generate_series(1, 8000) as i`)
      await listenApp(app)
      const { port } = app.server.address() as { port: number }
      const req = request({ host: '127.0.0.1', port, path: '/denuncias/exportar?tipo=masiva', headers: { authorization: `Bearer ${token}` } })
      const firstChunk = new Promise<void>((resolve, reject) => {
        req.on('response', (res) => {
          expect(res.statusCode).toBe(200)
          res.once('data', () => { res.pause(); resolve() })
        })
        req.on('error', reject)
      })
      req.end()
      await firstChunk
      // The server waits on the socket with its cursor open, in its snapshot.
      await expect.poll(async () => (await exportSessions()).map((s) => s.state), { timeout: 10_000 }).toContain('idle in transaction')
      // Held there by the client that stopped reading, not finishing on its own.
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect((await exportSessions()).map((s) => s.state)).toContain('idle in transaction')
      expect(pool().numUsed()).toBeGreaterThan(0)
      req.destroy()
      await expect.poll(async () => (await exportSessions()).length, { timeout: 10_000 }).toBe(0)
      await expect.poll(() => pool().numUsed(), { timeout: 10_000 }).toBe(0)
      // And the service goes on.
      expect(ok(await admin.get('/denuncias?tipo=masiva&limit=1')).total).toBe(8000)
    })
  })
}
