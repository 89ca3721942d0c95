/**
 * Import from the console (docs/user-guide.md "Console", `Importar`) in
 * Chromium at 1280 and 768 px: a CSV's dry run showing a row's problem by
 * row and field, nothing written; the corrected file checked and imported
 * with an Idempotency-Key (the records then read through the API, and the
 * key's replay answering the same ids); an NDJSON file's dry run and an
 * import whose answer is lost, retried with the same key; no
 * `Importar` for a role without `importar`. axe-core on each screen.
 */
import { expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { ADMIN, PASSWORD } from '../helpers/app.js'
import { call } from '../helpers/http.js'
import { createUser } from '../helpers/users.js'
import { checkScreen, expectClean, signIn, useConsoleServer, watchedPage } from './console-page.js'

const server = useConsoleServer()
const HEADER = 'denunciante_nombre;tipo;fecha_hechos;lugar_hechos;descripcion'
const csv = (rows: string[]): Buffer => Buffer.from(`${[HEADER, ...rows].join('\r\n')}\r\n`)
const PLACE = 'Calle Importada'

async function openImport (page: Page, username = ADMIN.username, password = ADMIN.password): Promise<void> {
  const { base } = server()
  await page.goto(`${base}/consola`)
  await signIn(page, username, password)
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link', { name: 'Denuncias', exact: true }).click()
  await page.locator('p.total').waitFor()
}

it('checks a CSV, shows its problem by row and field, then imports the corrected file with an Idempotency-Key (1280 px)', async () => {
  const { app, admin, base, browser } = server()
  const w = await watchedPage(browser, base, 1280)
  const { page } = w
  await openImport(page)
  await page.getByRole('link', { name: 'Importar' }).click()
  await page.getByRole('heading', { level: 1, name: 'Importar: Denuncias' }).waitFor()
  expect(await page.getByRole('button', { name: 'Comprobar sin importar' }).isDisabled()).toBe(true)
  await checkScreen(page, 'importar')

  const rows = [`Ana Pérez;hurto;2026-06-01 10:00:00;${PLACE};Bolso sustraído`, `Luis Gómez;robo;2026-06-02 11:00:00;${PLACE};"Escaparate; roto"`]
  // Our button opens the browser's picker (whose own button would speak the browser's language).
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Elegir fichero…' }).click()])
  await chooser.setFiles({ name: 'denuncias.csv', mimeType: 'text/csv', buffer: csv([rows[0]!, `Marta Ruiz;lesiones;ayer;${PLACE};Pelea`, rows[1]!]) })
  await page.getByText('denuncias.csv', { exact: true }).waitFor()
  await page.getByRole('button', { name: 'Comprobar sin importar' }).click()
  const check = page.getByRole('region', { name: 'Comprobación' })
  await expect.poll(() => check.getByRole('status').textContent()).toBe('3 filas leídas: 2 válidas, 1 con problemas. Corrija el fichero y vuelva a comprobarlo.')
  const problems = await check.getByRole('table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))
  expect(problems).toHaveLength(1)
  // Row 3 of the file (the header is row 1), the field by its label, the service's message.
  const modules = await call(app, 'GET', '/me/modulos', { token: admin })
  const fecha = (modules.body.data as any[]).find((m) => m.nombre === 'denuncias').campos.find((f: any) => f.nombre === 'fecha_hechos')
  expect(problems[0]!.slice(0, 2)).toEqual(['3', fecha.etiqueta ?? 'Fecha hechos'])
  expect(problems[0]![2]).toMatch(/^no es una fecha y hora válida/)
  expect(await page.getByRole('button', { name: /^Importar / }).count()).toBe(0)
  const asked = w.urls.filter((u) => u.includes('/denuncias/importar')).at(-1)!
  expect(new URL(asked).searchParams.get('simular')).toBe('true')
  expect((await call(app, 'GET', `/denuncias?lugar_hechos=${encodeURIComponent(PLACE)}`, { token: admin })).body.data.total).toBe(0)
  await checkScreen(page, 'importar-comprobacion')

  // The corrected file: checked, then imported, with the upload's request carrying a UUID key and the CSV's type.
  const sent: Array<Record<string, string>> = []
  page.on('request', (r) => { if (r.url().startsWith(`${base}/denuncias/importar`)) sent.push({ url: r.url(), ...r.headers() }) })
  await page.getByLabel('Fichero CSV o NDJSON').setInputFiles({ name: 'denuncias.csv', mimeType: 'text/csv', buffer: csv([rows[0]!, `Marta Ruiz;lesiones;2026-06-03 12:00:00;${PLACE};Pelea`, rows[1]!]) })
  await page.getByRole('button', { name: 'Comprobar sin importar' }).click()
  await expect.poll(() => check.getByRole('status').textContent()).toBe('3 filas leídas: 3 válidas. Se puede importar.')
  await page.getByRole('button', { name: 'Importar 3 registros' }).click()
  const result = page.getByRole('region', { name: 'Importación terminada' })
  await expect.poll(() => result.getByRole('status').textContent()).toBe('3 registros creados.')
  await checkScreen(page, 'importar-resultado')

  const listed = await call(app, 'GET', `/denuncias?lugar_hechos=${encodeURIComponent(PLACE)}&sort=_id`, { token: admin })
  expect(listed.body.data.records.map((r: any) => [r.denunciante_nombre, r.tipo, r.descripcion])).toEqual([['Ana Pérez', 'hurto', 'Bolso sustraído'], ['Marta Ruiz', 'lesiones', 'Pelea'], ['Luis Gómez', 'robo', 'Escaparate; roto']])
  const ids = listed.body.data.records.map((r: any) => r._id as string)
  expect(await result.getByRole('link').allTextContents()).toEqual([ids[0], ids[2], 'Ver la lista de Denuncias'])
  const real = sent.filter((s) => !s.url!.includes('simular')).at(-1)!
  expect(real['content-type']).toBe('text/csv')
  expect(real['idempotency-key']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  expect(sent.filter((s) => s.url!.includes('simular')).every((s) => s['idempotency-key'] === undefined)).toBe(true)
  // The service kept the key: the same request again is answered with the same ids, nothing written twice.
  const body = csv([rows[0]!, `Marta Ruiz;lesiones;2026-06-03 12:00:00;${PLACE};Pelea`, rows[1]!]).toString()
  const replay = await call(app, 'POST', '/denuncias/importar', { token: admin, raw: body, headers: { 'content-type': 'text/csv', 'idempotency-key': real['idempotency-key']! } })
  expect(replay.status).toBe(201)
  expect(replay.headers['idempotent-replayed']).toBe('true')
  expect(replay.body.data.ids).toEqual(ids)

  await result.getByRole('link', { name: 'Ver la lista de Denuncias' }).click()
  await page.getByRole('heading', { level: 1, name: 'Denuncias' }).waitFor()
  await expectClean(w)
  await page.context().close()
})

it('checks an NDJSON file at 768 px, retries a lost answer with the same key, and shows no import to a role without importar', async () => {
  const { admin, app, base, browser } = server()
  const w = await watchedPage(browser, base, 768)
  const { page } = w
  await openImport(page)
  await page.getByRole('link', { name: 'Importar' }).click()
  const lines: Array<Record<string, string>> = [{ denunciante_nombre: 'Eva', tipo: 'hurto', fecha_hechos: '2026-06-04 09:00:00', lugar_hechos: 'Plaza', descripcion: 'Cartera' }, { tipo: 'robo', fecha_hechos: '2026-06-04 09:00:00', lugar_hechos: 'Plaza', descripcion: 'Moto' }]
  await page.getByLabel('Fichero CSV o NDJSON').setInputFiles({ name: 'denuncias.ndjson', mimeType: '', buffer: Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')) })
  await page.getByRole('button', { name: 'Comprobar sin importar' }).click()
  const check = page.getByRole('region', { name: 'Comprobación' })
  await expect.poll(() => check.getByRole('status').textContent()).toBe('2 filas leídas: 1 válida, 1 con problemas. Corrija el fichero y vuelva a comprobarlo.')
  expect(await check.getByRole('table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[0]!.textContent, tr.children[2]!.textContent]))).toEqual([['2', 'es obligatorio']])
  await checkScreen(page, 'importar-ndjson-768')

  // The answer to the import is lost after the service wrote it: `Reintentar` sends it again with the same key, and gets the same records.
  lines[1]!.denunciante_nombre = 'Raúl'
  const place = 'Plaza del Reintento'
  const ndjson = Buffer.from(lines.map((l) => JSON.stringify({ ...l, lugar_hechos: place })).join('\n'))
  await page.getByLabel('Fichero CSV o NDJSON').setInputFiles({ name: 'denuncias.ndjson', mimeType: '', buffer: ndjson })
  await page.getByRole('button', { name: 'Comprobar sin importar' }).click()
  await expect.poll(() => check.getByRole('status').textContent()).toBe('2 filas leídas: 2 válidas. Se puede importar.')
  const keys: string[] = []
  await page.route(`${base}/denuncias/importar`, async (route) => {
    keys.push(route.request().headers()['idempotency-key']!)
    expect(route.request().headers()['content-type']).toBe('application/x-ndjson')
    if (keys.length > 1) return route.continue()
    expect((await route.fetch()).status()).toBe(201)
    await route.abort('connectionreset')
  })
  await page.getByRole('button', { name: 'Importar 2 registros' }).click()
  await page.getByRole('alert').getByText(/^No se sabe si la importación se guardó \(No se pudo conectar con el servicio\)/).waitFor()
  await checkScreen(page, 'importar-reintentar-768')
  await page.getByRole('button', { name: 'Reintentar' }).click()
  await expect.poll(() => page.getByRole('region', { name: 'Importación terminada' }).getByRole('status').textContent()).toBe('2 registros creados.')
  expect(keys).toHaveLength(2)
  expect(keys[1]).toBe(keys[0])
  const created = await call(app, 'GET', `/denuncias?lugar_hechos=${encodeURIComponent(place)}`, { token: admin })
  expect(created.body.data.records.map((r: any) => r.denunciante_nombre).sort()).toEqual(['Eva', 'Raúl'])
  await page.unroute(`${base}/denuncias/importar`)
  // The lost answer is the one failed request the page saw.
  expect(w.problems.splice(0).every((p) => /ERR_CONNECTION_RESET|ERR_FAILED/.test(p))).toBe(true)

  // A file of another kind is refused here, before anything is sent.
  await page.getByLabel('Fichero CSV o NDJSON').setInputFiles({ name: 'denuncias.xlsx', mimeType: 'application/octet-stream', buffer: Buffer.from('PK') })
  await page.getByRole('alert').getByText('«denuncias.xlsx» no es un fichero .csv ni .ndjson.').waitFor()
  expect(await page.getByRole('button', { name: 'Comprobar sin importar' }).isDisabled()).toBe(true)
  await expectClean(w)
  await page.context().close()

  // `jefe` exports but does not import (modules.yaml): no link, and the address says so.
  const jefe = await createUser(app, admin, 'jefe')
  const other = await watchedPage(browser, base, 768)
  await openImport(other.page, jefe.username, PASSWORD)
  await other.page.getByRole('link', { name: 'Informes' }).waitFor()
  expect(await other.page.getByRole('link', { name: 'Importar' }).count()).toBe(0)
  await other.page.goto(`${base}/consola#/denuncias/_importar`)
  await other.page.getByText('Su rol no puede importar registros de este módulo.').waitFor()
  await other.page.context().close()
})
