/**
 * What every console test does with a page: Chromium launched as the
 * explorer test does, requests and errors watched (nothing may leave the
 * service, no script error or CSP report), axe-core on each screen, a
 * screenshot kept in test/artifacts/ (git-ignored; a CI artefact).
 */
import { mkdirSync } from 'node:fs'
import { afterAll, beforeAll, expect } from 'vitest'
import { AxeBuilder } from '@axe-core/playwright'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, login } from '../helpers/http.js'
import { listenApp } from '../helpers/free-port.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname

export function launch (): Promise<Browser> {
  // launch() starts from a new, empty profile of its own (deleted on close).
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

export interface Watched {
  page: Page
  /** Every URL the page asked for. */
  urls: string[]
  /** Every Authorization header the page sent. */
  tokens: Set<string>
  foreign: string[]
  problems: string[]
}

/** `locale`: the browser's language (navigator.language, Accept-Language, Intl's default), en-US or es-ES. */
export async function watchedPage (browser: Browser, base: string, width = 1280, locale?: string): Promise<Watched> {
  // A context of its own: axe-core opens pages in it (browser.newPage() pages refuse).
  const context = await browser.newContext({ viewport: { width, height: 900 }, ...(locale !== undefined && { locale }) })
  const page = await context.newPage()
  const w: Watched = { page, urls: [], tokens: new Set(), foreign: [], problems: [] }
  page.on('request', (r) => {
    w.urls.push(r.url())
    const auth = r.headers().authorization
    if (auth !== undefined) w.tokens.add(auth.replace(/^Bearer /, ''))
    if (!r.url().startsWith(base) && !r.url().startsWith('data:')) w.foreign.push(r.url())
  })
  page.on('pageerror', (e) => w.problems.push(e.message))
  // A refused login, a 401 or a refused form logs its failed request: that is the page working, not a problem.
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 40[013]/.test(m.text())) w.problems.push(m.text()) })
  return w
}

/**
 * axe-core (WCAG 2.0/2.1 A and AA, and best practices) finds nothing on the screen as it is; a screenshot is kept.
 * Legacy mode: axe.run in the page itself. The default gathers each frame's partial results and
 * finishes the run in a new blank page, about 1.1 s of every check whatever its rules (0.25 s of
 * rules), and the console's pages hold no frame of another origin to test (docs/testing.md "How long it takes").
 */
export async function checkScreen (page: Page, name: string): Promise<void> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).setLegacyMode().analyze()
  expect(result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), name).toEqual([])
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: `${ARTIFACTS}consola-${name}.png`, fullPage: true })
}

/** Fills `Usuario` and `Contraseña` and presses `Entrar` (the answer, a refusal or the frame, is the caller's to wait for). */
export async function signIn (page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Usuario').fill(username)
  await page.getByLabel('Contraseña').fill(password)
  await page.getByRole('button', { name: 'Entrar' }).click()
}

/** Nothing left the service, no script error, the token in no URL, and no storage a script can read. */
export async function expectClean (w: Watched): Promise<void> {
  expect(w.foreign).toEqual([])
  expect(w.problems).toEqual([])
  for (const token of w.tokens) expect(w.urls.filter((u) => u.includes(token))).toEqual([])
  expect(await w.page.evaluate('localStorage.length + sessionStorage.length + document.cookie.length')).toBe(0)
}

/** A file's own app listening on a free port, the first superadmin's token and Chromium. */
export interface ConsoleServer {
  readonly h: Harness
  readonly app: FastifyInstance
  readonly base: string
  readonly admin: string
  readonly browser: Browser
}

/** Starts a ConsoleServer before the file's tests and closes it after them (`overrides`: the app's, e.g. a registry); the getter reads it inside a test or hook. */
export function useConsoleServer (overrides?: Parameters<Harness['app']>[0]): () => ConsoleServer {
  let h: Harness | undefined
  let server: ConsoleServer | undefined
  beforeAll(async () => {
    h = await createHarness()
    const app = await h.app(overrides)
    const base = await listenApp(app)
    const admin = await login(app)
    server = { h, app, base, admin, browser: await launch() }
  })
  afterAll(async () => {
    await server?.browser.close()
    await h?.close()
  })
  return () => server!
}

/** Creates a record through the API as the console server's administrator; its id. */
export async function createRecord (server: ConsoleServer, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(server.app, 'POST', `/${path}`, { token: server.admin, body })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data._id as string
}
