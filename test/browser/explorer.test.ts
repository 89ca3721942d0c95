/**
 * The API explorer in a real browser (docs/user-guide.md "API explorer and OpenAPI document"): Debian's Chromium, driven
 * by playwright-core, opens GET /docs on a listening server, finds every
 * module, authorises with a token through the explorer's Authorize dialog,
 * runs `GET /denuncias` with "Try it out" / "Execute" and sees 200 with the
 * record created beforehand. Every request the page makes stays on the
 * service (no CDN). A screenshot is kept in test/artifacts/ (git-ignored).
 * Run with `npm run test:browser`.
 */
import { mkdirSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { chromium, type Browser } from 'playwright-core'
import { loadRegistry } from '../../core/registry/load.js'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, login } from '../helpers/http.js'
import { listenApp } from '../helpers/free-port.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname
const registry = loadRegistry('modules.yaml')

let h: Harness
let app: FastifyInstance
let browser: Browser
let base: string

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  base = await listenApp(app)
  // launch() starts from a new, empty profile of its own (deleted on close).
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
})
afterAll(async () => {
  await browser?.close()
  await h?.close()
})

it('opens /docs, authorises with a token and runs GET /denuncias from the explorer', async () => {
  const token = await login(app)
  const created = await call(app, 'POST', '/denuncias', { token, body: { denunciante_nombre: 'Juan Pérez', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Sustracción de cartera' } })
  expect(created.status).toBe(201)

  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const foreign: string[] = []
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('data:')) foreign.push(r.url()) })
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(e.message))
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })

  const res = await page.goto(`${base}/docs`)
  expect(res?.status()).toBe(200)
  // One section per module, named by its label.
  await page.locator('.opblock-tag-section').first().waitFor()
  const tags = await page.locator('.opblock-tag').allTextContents()
  for (const m of registry.modules) expect(tags.some((t) => t.startsWith(m.label)), `${m.label} in ${tags.join(' | ')}`).toBe(true)
  // Sections start closed; the filter keeps the one named.
  expect(await page.locator('.opblock').count()).toBe(0)
  await page.locator('.filter input').fill('Denuncias')
  await expect.poll(() => page.locator('.opblock-tag').allTextContents()).toEqual([expect.stringMatching(/^Denuncias/)])
  await page.locator('#operations-tag-Denuncias').click()

  // Authorize: the bearer token, through the dialog.
  await page.locator('.auth-wrapper .authorize').click()
  const dialog = page.locator('.modal-ux')
  await dialog.locator('input').first().fill(token)
  await dialog.locator('.auth-btn-wrapper button.authorize').click()
  await dialog.locator('.auth-btn-wrapper button.btn-done').click()

  // GET /denuncias: expand, Try it out, Execute.
  const op = page.locator('#operations-Denuncias-listDenuncias')
  await op.locator('.opblock-summary').first().click()
  await op.locator('.try-out__btn').click()
  await op.locator('button.execute').click()
  const status = op.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor({ timeout: 60_000 })
  expect((await status.textContent())?.trim()).toBe('200')
  const shown = await op.locator('.live-responses-table .response .response-col_description').first().textContent()
  expect(shown).toContain(created.body.data._id)
  const url = await op.locator('.request-url').first().textContent()
  expect(url).toContain(`${base}/denuncias`)

  mkdirSync(ARTIFACTS, { recursive: true })
  await status.scrollIntoViewIfNeeded()
  await page.screenshot({ path: `${ARTIFACTS}explorer.png`, fullPage: false })
  expect(foreign).toEqual([])
  expect(problems).toEqual([])
})
