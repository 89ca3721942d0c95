/**
 * A write is sealed into the global chain within CHAIN_SEAL_DELAY by the
 * instance that wrote it, though no stream or webhook listens and the
 * periodic checkpoint run is an hour away (records/events/feed-hub.ts
 * `written`; docs/operator-guide.md "Tamper evidence: the global chain and
 * checkpoints"), and a write a longer transaction held back is sealed
 * once it ends, with no write after it. The other tests set the delay to
 * an hour (test/helpers/app.ts).
 */
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ok } from '../helpers/http.js'
import { usingPostgres } from '../helpers/services.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp

beforeAll(async () => {
  t = await startTestApp({ env: { CHAIN_SEAL_DELAY: '2s', CHECKPOINT_INTERVAL: '1h' } })
})
afterAll(async () => { await t.h.close() })

/** How many history entries of `id` are in the chain. */
async function sealed (id: string): Promise<number> {
  const [row] = await t.h.db.query<{ n: number }>(
    'select count(*)::int as n from sys_historial h join sys_cadena c on c.historial = h.id where h.registro = $1', [id])
  return row!.n
}

async function waitSealed (id: string, versions: number): Promise<number> {
  const t0 = Date.now()
  // The sealer takes only what committed before the oldest transaction still running in the cluster: other test files' may hold it back a moment.
  while (await sealed(id) < versions) {
    if (Date.now() - t0 > 30_000) throw new Error(`${id}: ${await sealed(id)} of ${versions} versions sealed after 30 s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return Date.now() - t0
}

it('seals a create and an update within the delay, with nobody listening and no checkpoint run', async () => {
  const created = ok(await t.admin.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Ruido en la plaza' }), 201)
  const id = created._id as string
  await waitSealed(id, 1)
  // The run that sealed the create is over: the update waits for a run of its own, up to the delay.
  ok(await t.admin.put(`/sala092/${id}`, { descripcion: 'Ruido en la plaza mayor', _version: 1 }))
  expect(await sealed(id)).toBe(1)
  await waitSealed(id, 2)
  const [anchors] = await t.h.db.query<{ n: number }>('select count(*)::int as n from sys_puntos_control')
  // Anchors only every 1000 entries, and no periodic run: nothing was published.
  expect(anchors!.n).toBe(0)
  expect(ok(await t.admin.get(`/sala092/${id}/verificar`))).toEqual({ valido: true })
})

// Embedded: PGlite is one session that every connection shares, so no transaction can hold another's back.
it.runIf(usingPostgres)('a write that a transaction still running held back is sealed once that ends, with no write after it', async () => {
  const holder = new pg.Client({ connectionString: t.h.db.url })
  await holder.connect()
  try {
    await holder.query('begin')
    await holder.query('select pg_current_xact_id()')
    const id = ok(await t.admin.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Retenida' }), 201)._id as string
    // The run the create asked for (2 s) came and could not take it.
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect(await sealed(id)).toBe(0)
    await holder.query('rollback')
    await waitSealed(id, 1)
  } finally {
    await holder.end()
  }
})
