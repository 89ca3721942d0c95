/**
 * The console's files as the service serves them (plugins/console.ts;
 * docs/architecture.md "The console"), through HTTP: /consola without a
 * token, a CSP that allows no inline script and no other origin, the
 * hashed assets kept a year, gzip when asked, 304 on a known ETag, an
 * unknown asset in the envelope; the first screen's JavaScript and CSS
 * under 300 KB compressed (SPEC S19). The browser side: test/browser/console.test.ts.
 */
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ensureConsoleBuilt } from '../../console/build.js'
import type { Harness } from '../helpers/app.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

let h: Harness, app: FastifyInstance

beforeAll(async () => {
  await ensureConsoleBuilt()
  ;({ h, app } = await startTestApp())
})
afterAll(async () => { await h.close() })

it('serves the page with a CSP that allows only its own files, and its assets cached for a year', async () => {
  const page = await app.inject({ url: '/consola' })
  expect(page.statusCode).toBe(200)
  expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
  expect(page.headers['cache-control']).toBe('no-cache')
  const csp = String(page.headers['content-security-policy'])
  expect(csp).toContain("default-src 'none'")
  expect(csp).toContain("script-src 'self';")
  expect(csp).toContain("style-src 'self';")
  expect(csp).toContain("connect-src 'self';")
  expect(csp).toContain("frame-ancestors 'none'")
  // Previews of evidence files (blob: URLs made by the console itself), and no other source for images or frames.
  expect(csp).toContain("img-src 'self' data: blob:;")
  expect(csp).toContain('frame-src blob:;')
  expect(csp).not.toContain('unsafe')
  expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/)
  expect(page.body).not.toMatch(/\bstyle=/)
  expect((await app.inject({ url: '/consola/' })).body).toBe(page.body)

  const assets = [...page.body.matchAll(/(?:src|href)="(\/consola\/assets\/[^"]+)"/g)].map((m) => m[1]!)
  expect(assets.some((a) => a.endsWith('.js'))).toBe(true)
  expect(assets.some((a) => a.endsWith('.css'))).toBe(true)
  let compressed = 0
  for (const url of assets) {
    const plain = await app.inject({ url })
    expect(plain.statusCode, url).toBe(200)
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    const gz = await app.inject({ url, headers: { 'accept-encoding': 'gzip, br' } })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gz.rawPayload).toString()).toBe(plain.body)
    compressed += gz.rawPayload.length
    expect((await app.inject({ url, headers: { 'if-none-match': String(plain.headers.etag) } })).statusCode).toBe(304)
  }
  expect(compressed).toBeLessThan(300 * 1024)
})

it('answers an unknown asset in the envelope, and the API keeps its own CSP', async () => {
  expectError(await app.inject({ url: '/consola/assets/no-existe.js' }).then((r) => ({ status: r.statusCode, body: r.json() })), 'RUTA_NO_ENCONTRADA')
  expect(String((await app.inject({ url: '/health' })).headers['content-security-policy'])).toContain("default-src 'none'")
  expect(String((await app.inject({ url: '/health' })).headers['content-security-policy'])).not.toContain("script-src 'self'")
})
