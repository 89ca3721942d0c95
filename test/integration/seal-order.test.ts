/**
 * The sealer takes history rows in (transaction id, row id) order, a batch
 * of 2,000 at a time (records/integrity/global-chain.ts). An import writes
 * all its rows in one transaction; when their row ids cross a power of ten
 * and more than a batch lies above it, ordering the ids as text would put
 * `10000`…`11999` first, and the next batch, asked for the rows after
 * `11999`, would never take `9500`…`9999`: they would stay out of the chain
 * for good and /verificar would report them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { appendChainEntries, type NewChainEntry } from '../../db/global-chain-statements.js'
import { queryRows } from '../../db/statement.js'
import { inTransaction } from '../../db/transaction.js'
import { call, ok } from '../helpers/http.js'
import { sealAll } from '../helpers/seal.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp

beforeAll(async () => {
  t = await startTestApp()
})
afterAll(async () => { await t.h.close() })

/** Rows below the power of ten, and above it: more than a sealing batch. */
const BELOW = 500
const ABOVE = 2_500

it('a run of more than one batch seals every row of an import in row id order, across a power of ten', async () => {
  const [{ next }] = await t.h.db.query<{ next: string }>("select nextval(pg_get_serial_sequence('sys_historial', 'id'))::text as next") as [{ next: string }]
  const power = 10 ** Math.ceil(Math.log10(Number(next) + BELOW + 1))
  await t.h.db.query(`select setval(pg_get_serial_sequence('sys_historial', 'id'), ${power - BELOW - 1})`)

  const csv = ['tipo_incidencia;descripcion', ...Array.from({ length: BELOW + ABOVE }, (_, i) => `normal;Aviso ${i + 1}`)].join('\r\n') + '\r\n'
  const imported = ok(await call(t.app, 'POST', '/sala092/importar', { token: t.token, raw: csv, headers: { 'content-type': 'text/csv' } }), 201)
  expect(imported.creados).toBe(BELOW + ABOVE)
  const ids = imported.ids as string[]

  const rows = await t.h.db.query<{ id: string, xid: string }>(
    "select id::text as id, xid::text as xid from sys_historial where modulo = 'sala092' and registro = any($1) order by sys_historial.id", [ids])
  expect(new Set(rows.map((r) => r.xid)).size).toBe(1)
  expect(Number(rows[0]!.id)).toBe(power - BELOW)
  expect(Number(rows.at(-1)!.id)).toBe(power + ABOVE - 1)
  const xid = rows[0]!.xid

  // Checkpoint runs until one has taken the import's transaction (another test file's may hold the sealer back a moment).
  const t0 = Date.now()
  for (;;) {
    ok(await call(t.app, 'POST', '/auditoria/puntos-control', { token: t.token }))
    const [state] = await t.h.db.query<{ past: boolean }>('select marca > $1::xid8 as past from sys_cadena_estado where id = 1', [xid])
    if (state?.past === true) break
    if (Date.now() - t0 > 30_000) throw new Error('the import was not sealed within 30 s')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }

  const chained = await t.h.db.query<{ id: string }>(
    'select h.id::text as id from sys_cadena c join sys_historial h on h.id = c.historial where h.xid = $1::xid8 order by c.seq', [xid])
  expect(chained.map((r) => r.id)).toEqual(rows.map((r) => r.id))
  expect(ok(await call(t.app, 'GET', `/sala092/${ids[0]}/verificar`, { token: t.token }))).toEqual({ valido: true })
  expect(ok(await call(t.app, 'GET', `/sala092/${ids.at(-1)}/verificar`, { token: t.token }))).toEqual({ valido: true })
})

it('versions a run left out of the chain below the watermark are sealed once the watermark is set back to 0 (docs/operator-guide.md)', async () => {
  const csv = 'tipo_incidencia;descripcion\r\nnormal;Uno\r\nnormal;Dos\r\n'
  const ids = ok(await call(t.app, 'POST', '/sala092/importar', { token: t.token, raw: csv, headers: { 'content-type': 'text/csv' } }), 201).ids as string[]
  const [{ xid }] = await t.h.db.query<{ xid: string }>("select xid::text as xid from sys_historial where modulo = 'sala092' and registro = $1", [ids[0]]) as [{ xid: string }]
  // What a run that skipped them left: the watermark past their transaction, and no entry.
  await t.h.db.query("update sys_cadena_estado set marca = ($1::text::bigint + 1)::text::xid8 where id = 1", [xid])
  const unsealed = async (): Promise<number> => (await t.h.db.query<{ n: number }>(
    'select count(*)::int as n from sys_historial h where xid = $1::xid8 and not exists (select 1 from sys_cadena c where c.historial = h.id)', [xid]))[0]!.n
  expect(await unsealed()).toBe(2)
  const before = ok(await call(t.app, 'GET', `/sala092/${ids[0]}/verificar`, { token: t.token }))
  expect(before.valido).toBe(false)

  await t.h.db.query("update sys_cadena_estado set marca = '0' where id = 1")
  await sealAll(t.admin, t.h.db)
  expect(await unsealed()).toBe(0)
  for (const id of ids) expect(ok(await call(t.app, 'GET', `/sala092/${id}/verificar`, { token: t.token }))).toEqual({ valido: true })
})

it('a run appends its entries with one statement text, whatever their number (docs/performance.md "The sealer\'s statement")', async () => {
  const rollback = new Error('rolled back')
  const entry = (i: number): NewChainEntry => ({
    seq: String(9_000_000_000_000 + i), historial: String(9_000_000_000_000 + i), modulo: 'sala092', registro: `X-${i}`, version: 1, entrada: 'e'.repeat(64), enlace: 'f'.repeat(64),
  })
  let texts: number | undefined
  let stored: Array<{ seq: string, registro: string }> = []
  // Written and counted in one transaction (one connection, whose statements pg_prepared_statements lists), then rolled back: the chain stays as it was.
  await expect(inTransaction(t.app.orm.em.fork(), async (tem) => {
    await appendChainEntries(tem, [entry(1)])
    await appendChainEntries(tem, [entry(2), entry(3), entry(4)])
    stored = await queryRows(tem, 'select seq::text as seq, registro from sys_cadena where seq >= ? order by seq', ['9000000000000'])
    const [row] = await queryRows<{ n: number }>(tem, "select count(*)::int as n from pg_prepared_statements where statement like '%insert into sys_cadena (%'")
    texts = row!.n
    throw rollback
  })).rejects.toBe(rollback)
  expect(stored).toEqual([1, 2, 3, 4].map((i) => ({ seq: String(9_000_000_000_000 + i), registro: `X-${i}` })))
  expect(texts).toBe(1)
})
