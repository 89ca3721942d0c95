/**
 * A station is not an attacker (docs/user-guide.md "Rate limits"): two
 * officers signed in from one address, in two browser contexts of Debian's
 * Chromium, work through lists and records far past that address's
 * per-IP limit and never meet a 429; each signed-in request is counted
 * against its own token, whose limit its RateLimit-* headers name; the
 * browser asks for nothing without the token (no /favicon.ico: the console
 * declares its icon). The address's limit is still there for requests
 * without a token.
 */
import { expect, it } from 'vitest'
import type { Page, Response } from 'playwright-core'
import { PASSWORD } from '../helpers/app.js'
import { call, validDni } from '../helpers/http.js'
import { createUser } from '../helpers/users.js'
import { expectClean, signIn, useConsoleServer, watchedPage, type Watched } from './console-page.js'

/**
 * Several minutes of a station's work, compressed by a low limit: a
 * per-address budget of 10 an hour stands for the default 50 a minute,
 * and each officer below makes more than three times it within the one
 * window (docs/operator-guide.md, RATE_LIMIT_IP_MAX). The per-token limit
 * is the default, 1000 an hour.
 */
const IP_MAX = 10
const TOKEN_MAX = 1000
const server = useConsoleServer({ env: { RATE_LIMIT_IP_MAX: String(IP_MAX), RATE_LIMIT_IP_WINDOW: '1h', RATE_LIMIT_TOKEN_MAX: String(TOKEN_MAX), RATE_LIMIT_TOKEN_WINDOW: '1h' } })

interface Officer { w: Watched, refused: string[], counted: Response[] }

async function post (path: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(server().app, 'POST', `/${path}`, { token: server().admin, body })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data._id as string
}

/** Signed in at 1280 px; every 429 the page meets, and every API answer to a request with a token. */
async function officer (role: string): Promise<Officer> {
  const user = await createUser(server().app, server().admin, role)
  const w = await watchedPage(server().browser, server().base)
  const o: Officer = { w, refused: [], counted: [] }
  w.page.on('response', (r) => {
    if (r.status() === 429) o.refused.push(r.url())
    if (r.request().headers().authorization !== undefined) o.counted.push(r)
  })
  await w.page.goto(`${server().base}/consola`)
  await signIn(w.page, user.username, PASSWORD)
  await w.page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  return o
}

const go = async (page: Page, hash: string): Promise<void> => { await page.evaluate(`location.hash = ${JSON.stringify(hash)}`) }

/** A list, then each of its first records, then another module's list: until the officer's signed-in requests pass three times the address's limit. */
async function work (o: Officer, ids: string[]): Promise<void> {
  const { page } = o.w
  for (let round = 0; o.counted.length <= 3 * IP_MAX && round < 20; round++) {
    await go(page, '#/denuncias')
    // A refused request shows its error, so each step waits for either.
    await page.locator('p.total, p.error').first().waitFor()
    expect(o.refused).toEqual([])
    await go(page, `#/denuncias/${ids[round % ids.length]}`)
    await page.locator('#historial, p.error').first().waitFor()
    expect(o.refused).toEqual([])
    await go(page, '#/vehiculos')
    await page.locator('p.total, p.error').first().waitFor()
    expect(o.refused).toEqual([])
  }
}

it('two users behind one address keep working without 429, far past the address\'s limit', async () => {
  const staff = await post('personal', { tip: '90001', nif: validDni(90001), nombre: 'Rigoberta', apellidos: 'Menchú Pérez', escala: 'oficial' })
  const ids: string[] = []
  for (let i = 1; i <= 4; i++) ids.push(await post('denuncias', { denunciante_nombre: `Persona ${i}`, tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: `Hechos ${i}`, agente_asignado: staff }))
  await post('vehiculos', { matricula: '1111-BBB', tipo: 'patrulla' })

  // Two officers at once, in two browser contexts, from the one address (127.0.0.1) the service sees.
  const officers = [await officer('oficial'), await officer('jefe')]
  await Promise.all(officers.map((o) => work(o, ids)))
  for (const o of officers) {
    expect(o.refused).toEqual([])
    // What the browser asks for by itself (an icon) is no page response to Playwright, but Chromium logs its refusal.
    expect(o.w.problems.filter((p) => /status of 429/.test(p))).toEqual([])
    expect(await o.w.page.locator('p.error').count()).toBe(0)
    expect(o.counted.length).toBeGreaterThan(3 * IP_MAX)
    // Each counted against its own token: the window its headers name is the token's.
    const limits = new Set(await Promise.all(o.counted.map(async (r) => (await r.allHeaders())['ratelimit-limit'])))
    expect([...limits]).toEqual([String(TOKEN_MAX)])
    expect([...o.w.tokens]).toHaveLength(1)
    await expectClean(o.w)
  }
  expect(officers[0]!.w.tokens).not.toEqual(officers[1]!.w.tokens)

  // The address's own limit still holds for what has no token: a few more unauthenticated requests from it are refused.
  const answers: number[] = []
  for (let i = 0; i <= IP_MAX; i++) answers.push((await fetch(`${server().base}/me`)).status)
  expect(answers).toContain(429)
  expect(answers.filter((s) => s !== 401 && s !== 429)).toEqual([])
  for (const o of officers) await o.w.page.context().close()
})
