/**
 * The events metrics of docs/operator-guide.md "Metrics": events produced,
 * webhook deliveries by result and the lag of each subscription an
 * instance delivers, scraped from a real METRICS_PORT listener after a
 * known delivery to a real receiver on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/free-port.js'
import { ok } from '../helpers/http.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js'

let t: TestApp
let rx: Receiver
let port: number

beforeAll(async () => {
  port = await freePort()
  t = await startTestApp({ env: { METRICS_PORT: String(port), WEBHOOK_RETRY_BASE: '200ms', WEBHOOK_LEASE: '2s' } })
  rx = await startReceiver()
})
afterAll(async () => {
  await rx?.close()
  await t?.h.close()
})

const sample = (text: string, name: string, labels?: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(labels === undefined ? `${name} ` : `${name}{${labels}} `))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

describe('events metrics', () => {
  it('count events produced, deliveries by result, and show each delivered subscription\'s lag', async () => {
    rx.answer('/m', 503)
    const sub = ok(await t.admin.post('/suscripciones', { url: rx.url('/m'), modulos: ['sala092'], rol: 'jefe' }), 201)
    ok(await t.admin.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Para las métricas' }), 201)
    await rx.waitFor('/m', 2)
    // The attempt is recorded after the answer: wait for the counter.
    let text = ''
    for (let i = 0; i < 100 && sample(text, 'webhook_deliveries_total', 'resultado="entregado"') !== 1; i++) {
      text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(sample(text, 'webhook_deliveries_total', 'resultado="entregado"')).toBe(1)
    expect(sample(text, 'webhook_deliveries_total', 'resultado="reintento"')).toBe(1)
    // The subscription and the call, at least (the first superadmin's creation may be sealed too).
    expect(sample(text, 'events_produced_total')).toBeGreaterThanOrEqual(2)
    expect(sample(text, 'webhook_lag_positions', `suscripcion="${sub._id}"`)).toEqual(expect.any(Number))
    expect(sample(text, 'webhook_lag_seconds', `suscripcion="${sub._id}"`)).toEqual(expect.any(Number))
  })
})
