/**
 * The console (SPEC S19; docs/user-guide.md "Console") in Debian's Chromium
 * through playwright-core, against a listening service: sign-in (a refusal
 * shows the API's message), the navigation by module label, every module's
 * list (asking only for its columns), sort, filters, an export, search and paging, a record
 * with its history, deleted records for a role that may delete, encrypted
 * fields shown as restricted to a role that may not decrypt them, the own
 * password change, sign-out (the token revoked) and the 30-minute idle
 * end. axe-core on each screen; screenshots in test/artifacts/. The token
 * never appears in a URL or in the page's storage. `npm run test:browser`.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Browser } from 'playwright-core'
import { loadRegistry } from '../../core/registry/load.js'
import { MESSAGES } from '../../core/errors.js'
import { ADMIN, PASSWORD, createHarness, type Harness } from '../helpers/app.js'
import { call, login } from '../helpers/http.js'
import { createUser } from '../helpers/users.js'
import { checkScreen, expectClean, launch, signIn, watchedPage } from './console-page.js'
import { listenApp } from '../helpers/free-port.js'

const registry = loadRegistry('modules.yaml')
let h: Harness, app: FastifyInstance, browser: Browser, base: string, admin: string
const ROWS = 52
/** The last one created is deleted: the list shows ROWS - 1, ROWS with `Incluir eliminados`. */
let deletedId: string
const LIVE = ROWS - 1

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  base = await listenApp(app)
  admin = await login(app)
  for (let i = 1; i <= ROWS; i++) {
    const descripcion = i === 7 ? 'Sustracción de una bicicleta roja' : `Hechos número ${i}`
    const res = await call(app, 'POST', '/denuncias', { token: admin, body: { denunciante_nombre: `Persona ${i}`, denunciante_dni: '12345678Z', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    if (i === ROWS) deletedId = res.body.data._id
    if (i === 5) expect((await call(app, 'PUT', `/denuncias/${res.body.data._id}`, { token: admin, body: { estado: 'archivada' } })).status).toBe(200)
  }
  expect((await call(app, 'DELETE', `/denuncias/${deletedId}`, { token: admin })).status).toBe(200)
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  await h?.close()
})

it('signs in, lists, sorts, searches, pages, opens a record and signs out', async () => {
  const w = await watchedPage(browser, base)
  const { page } = w
  const res = await page.goto(`${base}/consola`)
  expect(res?.status()).toBe(200)
  await checkScreen(page, 'inicio-sesion')

  await signIn(page, ADMIN.username, 'no-es-la-contraseña')
  await expect.poll(() => page.getByRole('alert').textContent()).toBe('Credenciales inválidas')
  await checkScreen(page, 'inicio-sesion-error')

  await signIn(page, ADMIN.username, ADMIN.password)
  const nav = page.getByRole('navigation', { name: 'Módulos' })
  await nav.getByRole('link').first().waitFor()
  expect(await nav.getByRole('link').allTextContents()).toEqual(registry.modules.map((m) => m.label))
  await checkScreen(page, 'portada')

  // Every module's list, asking only for its columns.
  for (const m of registry.modules) {
    await nav.getByRole('link', { name: m.label, exact: true }).click()
    await page.getByRole('heading', { level: 1, name: m.label }).waitFor()
    await page.locator('p.total').waitFor()
    expect(await page.locator('p.error').count(), m.name).toBe(0)
    const asked = w.urls.filter((u) => u.startsWith(`${base}/${m.path}?`)).at(-1)
    expect(new URL(asked!).searchParams.get('campos'), m.name).not.toBeNull()
  }

  await nav.getByRole('link', { name: 'Denuncias', exact: true }).click()
  await expect.poll(() => page.locator('p.total').textContent()).toBe(`${LIVE} registros`)
  expect(await page.getByRole('row').count()).toBe(51)
  await expect.poll(() => page.getByText('Página 1 de 2', { exact: true }).count()).toBe(1)
  await checkScreen(page, 'listado')

  // Sort by the reference: ascending, then descending.
  await page.getByRole('button', { name: 'Referencia' }).click()
  await expect.poll(() => page.getByRole('columnheader', { name: 'Referencia' }).getAttribute('aria-sort')).toBe('ascending')
  await expect.poll(() => page.getByRole('rowheader').first().textContent()).toMatch(/-0*1$/)
  await page.getByRole('button', { name: 'Referencia' }).click()
  await expect.poll(() => page.getByRole('rowheader').first().textContent()).toMatch(new RegExp(`-0*${LIVE}$`))

  await page.getByRole('button', { name: 'Siguiente' }).click()
  await expect.poll(() => page.getByText('Página 2 de 2', { exact: true }).count()).toBe(1)
  await expect.poll(() => page.getByRole('rowheader').count()).toBe(LIVE - 50)

  // Deleted records, for a role that may delete: listed with a mark, not linked.
  await page.getByLabel('Incluir eliminados').check()
  await expect.poll(() => page.locator('p.total').textContent()).toBe(`${ROWS} registros`)
  await expect.poll(() => page.getByRole('rowheader', { name: `${deletedId} Eliminado` }).count()).toBe(1)
  await checkScreen(page, 'listado-eliminados')
  await page.getByLabel('Incluir eliminados').uncheck()
  await expect.poll(() => page.locator('p.total').textContent()).toBe(`${LIVE} registros`)

  // Filters as the field's type allows: an enum's choice, a date-time's range of days.
  await page.getByLabel('Estado', { exact: true }).selectOption('archivada')
  await page.getByRole('button', { name: 'Buscar' }).click()
  await expect.poll(() => page.locator('p.total').textContent()).toBe('1 registro')
  expect(await page.getByLabel('Estado', { exact: true }).inputValue()).toBe('archivada')
  // Export with the list's filters: the token in the header, the file a download.
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Exportar CSV' }).click()])
  expect(file.suggestedFilename()).toMatch(/^denuncias-\d{4}-\d{2}-\d{2}\.csv$/)
  const csv = readFileSync((await file.path())!, 'utf8')
  expect(csv.startsWith('\uFEFF_id;')).toBe(true)
  expect(csv.trim().split('\n')).toHaveLength(2)
  expect(csv).toContain('archivada')
  await page.getByText(`Exportado: ${file.suggestedFilename()}`).waitFor()
  await checkScreen(page, 'listado-filtrado')
  await page.getByLabel('Estado', { exact: true }).selectOption('')
  await page.getByLabel('Fecha de los hechos desde').fill('02/06/2026')
  await page.getByRole('button', { name: 'Buscar' }).click()
  await expect.poll(() => page.locator('p.total').textContent()).toBe('0 registros')
  await page.getByLabel('Fecha de los hechos desde').fill('01/06/2026')
  await page.getByLabel('Fecha de los hechos hasta').fill('01/06/2026')
  await page.getByRole('button', { name: 'Buscar' }).click()
  await expect.poll(() => page.locator('p.total').textContent()).toBe(`${LIVE} registros`)
  expect(new URL(w.urls.filter((u) => u.startsWith(`${base}/denuncias?`)).at(-1)!).searchParams.get('fecha_hechos[lte]')).toBe('2026-06-01 23:59:59')

  await nav.getByRole('link', { name: 'Denuncias', exact: true }).click()
  await page.getByLabel('Buscar').fill('bicicleta')
  await page.getByRole('button', { name: 'Buscar' }).click()
  await expect.poll(() => page.locator('p.total').textContent()).toBe('1 registro')
  await checkScreen(page, 'busqueda')
  const id = (await page.getByRole('rowheader').first().textContent())!

  await page.getByRole('link', { name: id }).click()
  await page.getByRole('heading', { level: 1, name: `Denuncias: ${id}` }).waitFor()
  await page.getByText('Sustracción de una bicicleta roja').waitFor()
  await page.getByText('12345678Z').waitFor()
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  await page.getByText(/Versión 1/).waitFor()
  await page.getByText(/Integridad verificada/).waitFor()
  await checkScreen(page, 'registro')

  await expectClean(w)
  const tokens = [...w.tokens]
  expect(tokens.length).toBe(1)
  await page.getByRole('button', { name: 'Cerrar sesión' }).click()
  await page.getByRole('button', { name: 'Entrar' }).waitFor()
  expect((await call(app, 'GET', '/me', { token: tokens[0] })).status).toBe(401)
  await page.context().close()
  // Every module's list, six axe-core runs: 25-90 s here on a busy machine.
}, 300_000)

it('shows encrypted fields as restricted to a role that may not decrypt them, at 768 px', async () => {
  const consulta = await createUser(app, admin, 'consulta')
  const w = await watchedPage(browser, base, 768)
  const { page } = w
  await page.goto(`${base}/consola`)
  await signIn(page, consulta.username, PASSWORD)
  const nav = page.getByRole('navigation', { name: 'Módulos' })
  await nav.getByRole('link').first().waitFor()
  expect(await nav.getByRole('link', { name: 'Usuarios' }).count()).toBe(0)
  await nav.getByRole('link', { name: 'Denuncias', exact: true }).click()
  await page.getByRole('rowheader').first().getByRole('link').click()
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  expect(await page.locator('.fields .restricted').count()).toBeGreaterThanOrEqual(3)
  expect(await page.getByText('12345678Z').count()).toBe(0)
  await checkScreen(page, 'registro-restringido')
  await expectClean(w)
  await page.context().close()
})

it('ends a session idle for 30 minutes and revokes its token', async () => {
  const w = await watchedPage(browser, base)
  const { page } = w
  await page.clock.install()
  await page.goto(`${base}/consola`)
  await signIn(page, ADMIN.username, ADMIN.password)
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  const [token] = [...w.tokens]
  await page.clock.fastForward('29:00')
  expect(await page.getByRole('button', { name: 'Cerrar sesión' }).count()).toBe(1)
  await page.clock.fastForward('01:01')
  await page.getByRole('button', { name: 'Entrar' }).waitFor()
  await page.getByText('Sesión cerrada por inactividad (30 minutos)').waitFor()
  expect((await call(app, 'GET', '/me', { token })).status).toBe(401)
  await expectClean(w)
  await page.context().close()
})

it('changes the own password: the API\'s refusals beside their field, then the new one signs in', async () => {
  const oficial = await createUser(app, admin, 'oficial')
  const w = await watchedPage(browser, base)
  const { page } = w
  await page.goto(`${base}/consola`)
  await signIn(page, oficial.username, PASSWORD)
  await page.getByRole('link', { name: 'Cambiar contraseña' }).click()
  await page.getByRole('heading', { level: 1, name: 'Cambiar contraseña' }).waitFor()
  await checkScreen(page, 'contrasena')

  const NEW = 'otra-clave-muy-larga-456'
  await page.getByLabel('Contraseña actual').fill(PASSWORD)
  await page.getByLabel('Contraseña nueva').fill('corta')
  await page.getByRole('button', { name: 'Cambiar contraseña' }).click()
  await expect.poll(() => page.getByRole('alert').textContent()).toBe('Datos inválidos')
  expect(await page.getByLabel('Contraseña nueva').getAttribute('aria-invalid')).toBe('true')
  await checkScreen(page, 'contrasena-error')

  await page.getByLabel('Contraseña actual').fill(PASSWORD)
  await page.getByLabel('Contraseña nueva').fill(NEW)
  await page.getByRole('button', { name: 'Cambiar contraseña' }).click()
  await expect.poll(() => page.getByRole('status').last().textContent()).toBe(MESSAGES.CONTRASENA_CAMBIADA)

  await page.getByRole('button', { name: 'Cerrar sesión' }).click()
  await signIn(page, oficial.username, NEW)
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  await expectClean(w)
  await page.context().close()
})
