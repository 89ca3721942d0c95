/**
 * Every answer of a file download (docs/user-guide.md "Evidence files"),
 * whole, ranged, not modified and refused, carries the file answer's
 * headers (http/file-answer.ts): a CSP that sandboxes the document and
 * loads nothing, so an SVG or HTML file opened by a browser runs no script
 * in the service's origin, and `no-store`, so decrypted evidence stays in
 * no cache.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/app.js'
import { ok, type Api } from '../helpers/http.js'
import { onFileStore } from '../helpers/file-stores.js'

const CSP = "default-src 'none'; sandbox"
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(2000)])
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>document.title="ejecutado"</script></svg>')

let h: Harness, app: FastifyInstance, token: string, admin: Api

async function uploaded (body: Buffer, type: string, nombre: string): Promise<string> {
  const rec = ok(await admin.post('/denuncias', { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'Calle Mayor', descripcion: 'Robo' }), 201)
  const path = `/denuncias/${rec._id}/archivos/adjuntos`
  const res = await app.inject({ method: 'POST', url: `${path}?nombre=${nombre}`, headers: { authorization: `Bearer ${token}`, 'content-type': type }, payload: body })
  expect(res.statusCode, res.body).toBe(201)
  return `${path}/${res.json().data.archivo.id as string}`
}

const get = async (url: string, headers: Record<string, string> = {}, as: string | null = token) =>
  app.inject({ method: 'GET', url, headers: { ...(as !== null && { authorization: `Bearer ${as}` }), ...headers } })

function expectFileHeaders (res: { statusCode: number, headers: Record<string, unknown> }, status: number): void {
  expect(res.statusCode).toBe(status)
  expect(res.headers['content-security-policy']).toBe(CSP)
  expect(res.headers['cache-control']).toBe('no-store')
}

describe('file answers', () => {
  onFileStore('directory', {}, (t) => { ({ h, app, token, admin } = t) })

  it('200, 206 and 304 of an image and of an SVG carry the sandbox CSP and no-store', async () => {
    for (const [body, type, name] of [[PNG, 'image/png', 'foto.png'], [SVG, 'image/svg+xml', 'dibujo.svg']] as const) {
      const url = await uploaded(body, type, name)
      const whole = await get(url)
      expectFileHeaders(whole, 200)
      expect(whole.rawPayload).toEqual(body)
      expectFileHeaders(await get(url, { range: 'bytes=0-9' }), 206)
      expectFileHeaders(await get(url, { 'if-none-match': whole.headers.etag as string }), 304)
    }
  })

  it('a refused download (unknown file, range out of bounds, no token) carries them too', async () => {
    const url = await uploaded(PNG, 'image/png', 'foto.png')
    const missing = await get(`${url.slice(0, url.lastIndexOf('/'))}/${'0'.repeat(64)}`)
    expect(missing.statusCode).toBeGreaterThanOrEqual(400)
    expectFileHeaders(missing, missing.statusCode)
    expectFileHeaders(await get(url, { range: `bytes=${PNG.length + 10}-` }), 416)
    expectFileHeaders(await get(url, {}, null), 401)
  })

  it('the other answers keep the API CSP', async () => {
    const res = await admin.get('/me')
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(h).toBeDefined()
  })
})
