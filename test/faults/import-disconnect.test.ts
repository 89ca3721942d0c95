/**
 * An import whose client gives up, through nginx (docs/user-guide.md
 * "Import (importar)"): three instances behind nginx with their own
 * PostgreSQL and Redis (test/faults/helpers/stack.ts). A client sends a
 * 60,000-row import and gives up once the import's write transaction has
 * begun (seen in pg_stat_activity: its insert, in a transaction holding
 * an xid), so not by a guess at how fast the machine is; nginx closes its
 * upstream connection, the instance stops the import, rolls back and
 * logs it, and the records and history entries stay as they were —
 * checked once the instance has logged it and for a few seconds after.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ABANDONED } from '../../generate/import-request.js'
import { login, startStack, type Stack } from './helpers/stack.js'

const ROWS = 60_000
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

describe('an import whose client gives up through nginx', () => {
  let stack: Stack
  let token: string

  beforeAll(async () => {
    stack = await startStack()
    token = await login(stack.url)
  })
  afterAll(async () => { await stack?.close() })

  async function counts (): Promise<{ denuncias: number, historial: number }> {
    const [row] = await stack.query<{ denuncias: number, historial: number }>('select (select count(*)::int from denuncias) as denuncias, (select count(*)::int from sys_historial) as historial')
    return row!
  }

  /** The instances' log lines saying an import was abandoned (test/faults/helpers/instances.ts writes each to its log file). */
  function abandoned (): number {
    return stack.instances.map((i) => join(stack.dir, `${i.name}.log`)).filter((f) => existsSync(f))
      .reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').filter((l) => l.includes(ABANDONED)).length, 0)
  }

  it(`a ${ROWS}-row import given up while it writes is rolled back: no record, no history entry`, async () => {
    const before = await counts()
    const csv = ['denunciante_nombre;tipo;fecha_hechos;lugar_hechos;descripcion', ...Array.from({ length: ROWS }, (_, i) => `Ana ${i};hurto;2026-06-01 10:00:00;Calle Mayor;Fila ${i}`)].join('\r\n') + '\r\n'
    const started = Date.now()
    const giveUp = new AbortController()
    const sent = fetch(`${stack.url}/denuncias/importar`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
      body: csv,
      signal: giveUp.signal,
    }).then(async (res) => `answered ${res.status}: ${(await res.text()).slice(0, 200)}`, (err: Error) => err.name)
    // The import's transaction has written its first batch: its insert, in a transaction holding an xid.
    const writing = async (): Promise<boolean> => (await stack.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where backend_xid is not null and query like \'with r as (insert into "denuncias"%\''))[0]!.n > 0
    const deadline = Date.now() + 60_000
    while (!(await writing())) {
      if (Date.now() > deadline) throw new Error(`the import did not start writing within 60 s: ${await Promise.race([sent, 'no answer yet'])}`)
      await sleep(10)
    }
    giveUp.abort()
    const outcome = await sent
    console.log(`[faults] import given up while writing: ${outcome} after ${Date.now() - started} ms`)
    // The client gave up before any answer (else the import committed before the abort reached it).
    expect(outcome).toBe('AbortError')
    // Until the instance has stopped the import and said so, then a few seconds more.
    const logged = Date.now() + 60_000
    while (abandoned() === 0) {
      if (Date.now() > logged) throw new Error(`no instance logged "${ABANDONED}" within 60 s; records ${JSON.stringify(await counts())}, before ${JSON.stringify(before)}`)
      await sleep(100)
    }
    for (let i = 0; i < 10; i++) {
      expect(await counts()).toEqual(before)
      await sleep(300)
    }
    console.log(`[faults] import rolled back ${Date.now() - started} ms after it was sent; counts unchanged ${JSON.stringify(before)}`)
  })
})
