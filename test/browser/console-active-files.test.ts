/**
 * A file a browser would run never runs in the console's origin
 * (docs/user-guide.md "Evidence files", docs/decisions.md "No file becomes
 * an address the console's origin renders"), in Debian's Chromium: an SVG
 * and an HTML file whose scripts would leave a marker (a localStorage key,
 * the title, a request to /me) are uploaded through the console, listed,
 * downloaded; no element, window.open call or new page offers a `blob:` or
 * `data:` address of them, no blob of an active type is ever made, the
 * saved bytes are the file's, and opening every blob the page made, as a
 * user's "open in new tab" would, runs nothing. A PNG keeps its `<img>`
 * preview. `npm run test:browser`.
 */
import { readFileSync } from 'node:fs'
import { beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Browser, Page } from 'playwright-core'
import { ADMIN } from '../helpers/app.js'
import { call } from '../helpers/http.js'
import { watchedPage, type Watched, useConsoleServer } from './console-page.js'

const SCRIPT = "localStorage.setItem('ejecutado','1');document.title='EJECUTADO';fetch('/me?marca=ejecutado')"
const SVG = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>${SCRIPT}</script><rect width="10" height="10"/></svg>`)
const HTML = Buffer.from(`<!DOCTYPE html><html><body><script>${SCRIPT}</script></body></html>`)
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
const ACTIVE = /svg|html|xml|javascript|ecmascript/i

/** Recorded in the page before any script: every blob URL made (with its type) and every window.open call. */
const RECORDER = `(() => {
  const made = {}
  const opened = []
  const create = URL.createObjectURL.bind(URL)
  URL.createObjectURL = (blob) => { const url = create(blob); made[url] = blob.type; return url }
  const open = window.open.bind(window)
  window.open = (...args) => { opened.push(String(args[0])); return open(...args) }
  Object.defineProperty(window, '__blobs', { value: made })
  Object.defineProperty(window, '__opened', { value: opened })
  Object.defineProperty(window, '__open', { value: open })
})()`

let app: FastifyInstance, browser: Browser, base: string, admin: string

const server = useConsoleServer()
beforeAll(() => { ({ app, browser, base, admin } = server()) })

async function signedIn (): Promise<Watched> {
  const w = await watchedPage(browser, base)
  await w.page.context().addInitScript(RECORDER)
  await w.page.goto(`${base}/consola`)
  await w.page.getByLabel('Usuario').fill(ADMIN.username)
  await w.page.getByLabel('Contraseña').fill(ADMIN.password)
  await w.page.getByRole('button', { name: 'Entrar' }).click()
  await w.page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  return w
}

/**
 * The navigable addresses the page offers: links, frames, objects, embeds, and images' sources (with their blob's type);
 * but the console's own empty icon, `data:,` (console/index.html), which holds no byte of anything.
 */
async function addresses (page: Page): Promise<Array<{ tag: string, url: string, type?: string }>> {
  return page.evaluate(`[...document.querySelectorAll('a[href], area[href], iframe, frame, object, embed, img, source, link[href]:not([rel="icon"][href="data:,"])')].map((e) => {
    const url = e.getAttribute('href') ?? e.getAttribute('src') ?? e.getAttribute('data') ?? ''
    return { tag: e.tagName.toLowerCase(), url, type: window.__blobs[url] }
  }).filter((a) => /^(blob|data):/i.test(a.url))`)
}

it('an SVG or HTML file with a script is listed and saved, never made an address of the console\'s origin, and its script never runs', async () => {
  const rec = await call(app, 'POST', '/denuncias', { token: admin, body: { denunciante_nombre: 'Ana Ruiz', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Hechos' } })
  expect(rec.status, JSON.stringify(rec.body)).toBe(201)
  const w = await signedIn()
  const { page } = w
  const context = page.context()
  const popups: string[] = []
  context.on('page', (p) => { popups.push(p.url()); p.on('framenavigated', (f) => popups.push(f.url())) })
  await page.evaluate(`location.hash = ${JSON.stringify(`#/denuncias/${rec.body.data._id as string}`)}`)
  await page.getByRole('heading', { name: 'Archivos adjuntos', exact: true }).waitFor()

  const files = [
    { name: 'dibujo.svg', mimeType: 'image/svg+xml', buffer: SVG },
    // An SVG that calls itself a PNG by name, declared as nothing: recorded as what its bytes show.
    { name: 'foto.png', mimeType: 'application/octet-stream', buffer: SVG },
    { name: 'informe.html', mimeType: 'text/html', buffer: HTML },
    { name: 'control.png', mimeType: 'image/png', buffer: PNG },
  ]
  for (const f of files) {
    await page.getByLabel('Añadir archivos a archivos adjuntos').setInputFiles(f)
    await page.getByText(`Subido: ${f.name}`).waitFor()
  }
  for (const f of files.slice(0, 3)) {
    // No preview offered: no blob of it shown anywhere.
    expect(await page.getByRole('button', { name: `Vista previa de ${f.name}` }).count(), f.name).toBe(0)
    // Saved, with its own bytes, as a download that renders nothing.
    const [saved] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Descargar ${f.name}` }).click()])
    expect(saved.suggestedFilename()).toBe(f.name)
    expect(readFileSync((await saved.path())!)).toEqual(f.buffer)
  }
  // The PNG keeps its preview: an <img> of an image/png blob.
  await page.getByRole('button', { name: 'Vista previa de control.png' }).click()
  const img = page.getByRole('img', { name: 'Vista previa de control.png' })
  await img.waitFor()
  await expect.poll(() => img.evaluate((el: any) => el.naturalWidth as number)).toBe(1)

  const blobs = await page.evaluate('window.__blobs') as Record<string, string>
  expect(Object.values(blobs).filter((type) => ACTIVE.test(type))).toEqual([])
  const offered = await addresses(page)
  expect(offered.filter((a) => a.tag !== 'img' || a.type === undefined || ACTIVE.test(a.type))).toEqual([])
  expect(await page.evaluate('window.__opened')).toEqual([])
  expect(popups.filter((u) => /^(blob|data):/.test(u))).toEqual([])

  // What a user's "open in new tab" of any blob the page made would do: nothing runs.
  for (const url of Object.keys(blobs)) {
    const opened = context.waitForEvent('page')
    await page.evaluate(`window.__open(${JSON.stringify(url)}, '_blank')`)
    const tab = await opened
    await tab.waitForLoadState().catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 300))
    if (!tab.isClosed()) await tab.close()
  }
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(w.urls.filter((u) => u.includes('marca=ejecutado'))).toEqual([])
  expect(await page.evaluate("localStorage.getItem('ejecutado')")).toBeNull()
  expect(await page.title()).not.toBe('EJECUTADO')
  await context.close()
})
