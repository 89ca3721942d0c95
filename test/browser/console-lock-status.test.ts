/**
 * A user's login lock-out in the console's user screen (docs/user-guide.md
 * "Console", "Rate limits"), in Debian's Chromium: a user locked by failed
 * logins through the API (100 from many addresses: locked for every client
 * without a remembered device) shows "Bloqueado hasta dd/mm/aaaa hh:mm";
 * `Desbloquear` lifts it, the screen says so, and the user signs in.
 * axe-core on the screen. `npm run test:browser`.
 */
import { beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Browser } from 'playwright-core'
import { MESSAGES } from '../../core/errors.js'
import { formatDateTime } from '../../core/time.js'
import { ADMIN, PASSWORD } from '../helpers/app.js'
import { createUser } from '../helpers/users.js'
import { checkScreen, expectClean, signIn, watchedPage, useConsoleServer } from './console-page.js'

let app: FastifyInstance, browser: Browser, base: string, admin: string

const server = useConsoleServer()
beforeAll(() => { ({ app, browser, base, admin } = server()) })

const tryLogin = async (username: string, password: string, ip: string): Promise<number> =>
  (await app.inject({ method: 'POST', url: '/auth/login', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ username, password }) })).statusCode

it('shows a user locked by failed logins until when; Desbloquear lifts it and the user signs in', async () => {
  const user = await createUser(app, admin, 'agente')
  const before = formatDateTime(new Date(Date.now() + 15 * 60_000 - 60_000), app.config.timeZone)
  for (let i = 0; i < 100; i++) expect(await tryLogin(user.username, 'incorrecta-xxxx', `10.2.${Math.floor(i / 9)}.${i % 9 + 1}`)).toBe(401)
  const after = formatDateTime(new Date(Date.now() + 15 * 60_000 + 60_000), app.config.timeZone)
  expect(await tryLogin(user.username, PASSWORD, '10.1.0.1')).toBe(429)

  const w = await watchedPage(browser, base)
  const { page } = w
  await page.goto(`${base}/consola`)
  await signIn(page, ADMIN.username, ADMIN.password)
  await page.getByRole('navigation', { name: 'Herramientas' }).getByRole('link', { name: 'Administrar usuarios' }).click()
  await page.getByRole('heading', { level: 1, name: 'Administración de usuarios' }).waitFor()
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: user.username, exact: true }) })
  await row.getByRole('button', { name: `Gestionar ${user.username}` }).click()
  await page.getByRole('heading', { level: 2, name: `Usuario ${user.username}` }).waitFor()

  const line = page.getByText(/^Bloqueado hasta /)
  await line.waitFor()
  const shown = /^Bloqueado hasta (\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}) por intentos fallidos de inicio de sesión$/.exec((await line.textContent()) ?? '')
  expect(shown, await line.textContent() ?? '').not.toBeNull()
  // Between a minute before and a minute after the lock's 15 minutes, in the service's time zone.
  const iso = shown![1]!.replace(/^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}:\d{2})$/, '$3-$2-$1 $4')
  expect(iso >= before.slice(0, 16) && iso <= after.slice(0, 16), `${before} ≤ ${iso} ≤ ${after}`).toBe(true)
  await checkScreen(page, 'usuario-bloqueado')

  await page.getByRole('button', { name: 'Desbloquear' }).click()
  await page.getByRole('status').filter({ hasText: MESSAGES.USUARIO_DESBLOQUEADO }).waitFor()
  await page.getByText('Sin bloqueo de inicio de sesión').waitFor()
  expect(await page.getByText(/^Bloqueado hasta /).count()).toBe(0)

  // The user signs in, in a browser of their own.
  const other = await watchedPage(browser, base)
  await other.page.goto(`${base}/consola`)
  await signIn(other.page, user.username, PASSWORD)
  await other.page.getByRole('button', { name: 'Cerrar sesión' }).waitFor()
  await expectClean(w)
  await expectClean(other)
  await other.page.context().close()
  await page.context().close()
})
