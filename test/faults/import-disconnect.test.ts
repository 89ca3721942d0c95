/**
 * An import whose client gives up, through nginx (docs/user-guide.md
 * "Import (importar)"): three instances behind nginx with their own
 * PostgreSQL and Redis (test/faults/helpers/stack.ts). A client sends a
 * 10,000-row import and gives up after 1.2 s, long before it could
 * commit; nginx closes its upstream connection, the instance stops the
 * import (rolling back its transaction if it had one) and logs it, and
 * the records and history entries stay as they were — checked once the
 * instance has logged it and for a few seconds after. (CSV: 10,000 rows
 * fit within nginx's default 1 MiB body.)
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ABANDONED } from '../../generate/import-request.js'
import { login, startStack, type Stack } from './helpers/stack.js'

const ROWS = 10_000
const GIVE_UP_MS = 1200

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

  it(`a ${ROWS}-row import given up at ${GIVE_UP_MS} ms is rolled back: no record, no history entry`, async () => {
    const before = await counts()
    const csv = ['denunciante_nombre;tipo;fecha_hechos;lugar_hechos;descripcion', ...Array.from({ length: ROWS }, (_, i) => `Ana ${i};hurto;2026-06-01 10:00:00;Calle Mayor;Fila ${i}`)].join('\r\n') + '\r\n'
    const started = Date.now()
    const outcome = await fetch(`${stack.url}/denuncias/importar`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
      body: csv,
      signal: AbortSignal.timeout(GIVE_UP_MS),
    }).then(async (res) => `answered ${res.status}: ${(await res.text()).slice(0, 200)}`, (err: Error) => err.name)
    console.log(`[faults] import given up: ${outcome} after ${Date.now() - started} ms`)
    // The client gave up before any answer (else the import was quicker than the test assumes).
    expect(outcome).toBe('TimeoutError')
    // Until the instance has stopped the import and said so, then a few seconds more.
    const deadline = Date.now() + 60_000
    while (abandoned() === 0) {
      if (Date.now() > deadline) throw new Error(`no instance logged "${ABANDONED}" within 60 s; records ${JSON.stringify(await counts())}, before ${JSON.stringify(before)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    for (let i = 0; i < 10; i++) {
      expect(await counts()).toEqual(before)
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
    console.log(`[faults] import rolled back ${Date.now() - started} ms after it was sent; counts unchanged ${JSON.stringify(before)}`)
  })
})
