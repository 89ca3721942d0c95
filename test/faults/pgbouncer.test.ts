/**
 * The service behind PgBouncer (docs/operations.md "PgBouncer"), in each
 * pool mode: three instances behind nginx whose DATABASE_URL is Debian's
 * PgBouncer 1.18 (in transaction mode with fewer server connections than
 * the instances' pools, so server connections change hands between
 * transactions; in session mode with one per client connection). Transaction
 * mode runs with DATABASE_NAMED_STATEMENTS=false (1.18 keeps no prepared
 * statement across transactions). Under creates and If-Match updates, an
 * import, an export, searches and the chain's sealing (an advisory lock per
 * transaction, every 2 s), every answer is a 2xx, every acknowledged write
 * is stored, the chain seals it all and a checkpoint extends the last.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, login, startStack, type Stack } from './helpers/stack.js'
import { ackFigures, startAckLoad } from './helpers/ack-load.js'
import { waitFor } from './helpers/processes.js'
import type { PoolMode } from './helpers/pgbouncer.js'

const HEADER = 'denunciante_nombre;tipo;fecha_hechos;lugar_hechos;descripcion'

for (const mode of ['transaction', 'session'] as PoolMode[]) {
  describe(`three instances through PgBouncer, pool_mode = ${mode}`, () => {
    let stack: Stack
    let token: string

    beforeAll(async () => {
      stack = await startStack({ pgbouncer: mode, env: { CHECKPOINT_INTERVAL: '2s' } })
      token = await login(stack.url)
    })
    afterAll(async () => { await stack?.close() })

    it('creates, If-Match updates, an import, an export and searches: all 2xx, nothing lost, the chain sealed and whole', async () => {
      const startedAt = Date.now()
      const load = startAckLoad({ url: stack.url, token, concurrency: 20 })
      const rows = Array.from({ length: 500 }, (_, i) => `Persona ${i};hurto;2026-06-01 10:00:00;Calle ${i};Importada ${i}`)
      const imported = await fetch(`${stack.url}/denuncias/importar`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
        body: `${HEADER}\n${rows.join('\n')}\n`,
      })
      expect(imported.status, await imported.clone().text()).toBe(201)
      const exported = await fetch(`${stack.url}/denuncias/exportar?formato=ndjson`, { headers: { authorization: `Bearer ${token}` } })
      expect(exported.status).toBe(200)
      expect((await exported.text()).trim().split('\n').length).toBe(500)
      for (const q of ['Persona 4', 'Calle']) expect((await call(stack.url, 'GET', `/denuncias?q=${encodeURIComponent(q)}&limit=5`, { token })).status).toBe(200)
      await waitFor('1,500 answers', async () => load.acks.length >= 1500, 120_000, 50)
      load.stop()
      const figures = await ackFigures(await load.done, startedAt, stack.query)
      console.log(`[faults] PgBouncer ${mode} mode: ${JSON.stringify(figures)}`)
      expect(Object.keys(figures.byStatus).filter((s) => !s.startsWith('2'))).toEqual([])
      expect(figures).toMatchObject({ lost: 0, idsTwice: 0 })
      // The chain sealed what was written (its sealer takes an advisory lock in each transaction).
      await waitFor('the chain sealed every history entry', async () => {
        const [row] = await stack.query<{ n: number }>('select count(*)::int as n from sys_historial h where not exists (select 1 from sys_cadena c where c.historial = h.id)')
        return row!.n === 0
      }, 60_000, 500)
      // A checkpoint signed now extends the last one: the chain was never forked.
      const signed = await call(stack.url, 'POST', '/auditoria/puntos-control', { token })
      expect(signed.status, JSON.stringify(signed.body)).toBe(200)
      expect(signed.body.data.motivo).toBeUndefined()
      expect(signed.body.data.punto_control).not.toBeNull()
    })
  })
}
