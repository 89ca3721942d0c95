/**
 * The console's reports (docs/user-guide.md "Console", `Informes`) in
 * Chromium at 1280 and 768 px: opened from a filtered list, denuncias by
 * type and by month of the facts with the list's filter applied, as a
 * table beside a chart, and its CSV download; fines by state with the sum
 * of their amounts. axe-core on each screen. `npm run test:browser`.
 */
import { readFileSync } from 'node:fs'
import { beforeAll, expect, it } from 'vitest'
import { ADMIN } from '../helpers/app.js'
import { call } from '../helpers/http.js'
import { checkScreen, expectClean, signIn, useConsoleServer, watchedPage } from './console-page.js'

const server = useConsoleServer()
/** What GET /me/modulos says of a field, to read labels as the console does (a name where a label is missing). */
let fields: Record<string, Array<{ nombre: string, etiqueta?: string, etiquetas_valores?: Record<string, string>, formato?: string }>>

const denuncia = (tipo: string, fecha: string) => ({ denunciante_nombre: 'Persona', tipo, fecha_hechos: `${fecha} 10:30:00`, lugar_hechos: 'Plaza Mayor', descripcion: 'Hechos' })

beforeAll(async () => {
  const { app, admin } = server()
  for (const [tipo, fecha] of [['hurto', '2026-05-10'], ['hurto', '2026-05-20'], ['hurto', '2026-06-03'], ['robo', '2026-06-04'], ['robo', '2026-06-05'], ['robo', '2026-06-06']]) {
    expect((await call(app, 'POST', '/denuncias', { token: admin, body: denuncia(tipo!, fecha!) })).status).toBe(201)
  }
  // Archived: left out by the list's filter on the state, which the report keeps.
  const archived = await call(app, 'POST', '/denuncias', { token: admin, body: denuncia('lesiones', '2026-06-07') })
  expect((await call(app, 'PUT', `/denuncias/${archived.body.data._id}`, { token: admin, body: { estado: 'archivada' } })).status).toBe(200)
  for (const importe of [100.25, 200.25]) {
    const res = await call(app, 'POST', '/sanciones', { token: admin, body: { tipo: 'trafico', infractor_nombre: 'Conductor', fecha_infraccion: '2026-06-01 09:00:00', lugar_infraccion: 'Avenida', importe } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
  }
  const mine = await call(app, 'GET', '/me/modulos', { token: admin })
  fields = Object.fromEntries((mine.body.data as Array<{ nombre: string, campos: typeof fields[string] }>).map((m) => [m.nombre, m.campos]))
})

const label = (mod: string, name: string, fallback: string): string => fields[mod]!.find((f) => f.nombre === name)?.etiqueta ?? fallback
const valueLabel = (mod: string, name: string, v: string): string => fields[mod]!.find((f) => f.nombre === name)?.etiquetas_valores?.[v] ?? v

for (const width of [1280, 768]) {
  it(`reports denuncias by type and month with the list's filter, as a table, a chart and a CSV (${width} px)`, async () => {
    const { base, browser } = server()
    const w = await watchedPage(browser, base, width)
    const { page } = w
    await page.goto(`${base}/consola`)
    await signIn(page, ADMIN.username, ADMIN.password)
    await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link', { name: 'Denuncias', exact: true }).click()
    await page.getByLabel('Estado', { exact: true }).selectOption('pendiente')
    await page.getByRole('button', { name: 'Buscar' }).click()
    await expect.poll(() => page.locator('p.total').textContent()).toBe('6 registros')

    await page.getByRole('link', { name: 'Informes' }).click()
    await page.getByRole('heading', { level: 1, name: 'Informes: Denuncias' }).waitFor()
    // The list's filter came along, in the form and in the request.
    expect(await page.getByLabel('Estado', { exact: true }).inputValue()).toBe('pendiente')
    await page.getByLabel('Agrupar por').selectOption('tipo')
    await page.getByLabel('Y por').selectOption('fecha_hechos')
    await page.getByLabel('Fechas por').selectOption('mes')
    await page.getByRole('button', { name: 'Ver informe' }).click()

    const tipo = label('denuncias', 'tipo', 'Tipo')
    const fecha = `${label('denuncias', 'fecha_hechos', 'Fecha hechos')} (mes)`
    const report = page.getByRole('region', { name: /^Registros por / })
    const table = report.getByRole('table')
    await expect.poll(() => table.locator('thead th').allTextContents()).toEqual([tipo, fecha, 'Registros'])
    const rows = [[valueLabel('denuncias', 'tipo', 'hurto'), 'mayo de 2026', '2'], [valueLabel('denuncias', 'tipo', 'hurto'), 'junio de 2026', '1'], [valueLabel('denuncias', 'tipo', 'robo'), 'junio de 2026', '3']]
    expect(await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))).toEqual(rows)
    expect(await table.locator('tfoot tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))).toEqual([['Total', '', '6']])
    expect(await report.getByRole('status').first().textContent()).toBe('6 registros en 3 grupos')
    const asked = new URL(w.urls.filter((u) => u.includes('/denuncias/resumen?')).at(-1)!)
    expect(asked.searchParams.get('agrupar')).toBe('tipo,fecha_hechos:mes')
    expect(asked.searchParams.get('estado')).toBe('pendiente')
    // The chart: one bar per type, split by month (a legend of two months); hidden from assistive technology.
    const chart = report.locator('.stacked-chart')
    expect(await chart.getAttribute('aria-hidden')).toBe('true')
    expect(await chart.locator('.legend li').allTextContents()).toEqual(['junio de 2026', 'mayo de 2026'])
    expect(await chart.locator('svg.chart rect').count()).toBe(3)

    const [file] = await Promise.all([page.waitForEvent('download'), report.getByRole('button', { name: 'Descargar CSV' }).click()])
    expect(file.suggestedFilename()).toMatch(/^denuncias-informe-\d{4}-\d{2}-\d{2}\.csv$/)
    expect(readFileSync((await file.path())!, 'utf8')).toBe(`\uFEFF${[[tipo, fecha, 'Registros'], ...rows, ['Total', '', '6']].map((r) => r.join(';')).join('\r\n')}\r\n`)
    await report.getByText(`Descargado: ${file.suggestedFilename()}`).waitFor()
    await checkScreen(page, `informe-${width}`)

    // Back to the list keeps its filter.
    await page.getByRole('link', { name: 'Volver a la lista' }).click()
    await expect.poll(() => page.locator('p.total').textContent()).toBe('6 registros')
    await expectClean(w)
    await page.context().close()
  })
}

it('sums a numeric field per group and charts it (768 px)', async () => {
  const { base, browser } = server()
  const w = await watchedPage(browser, base, 768)
  const { page } = w
  await page.goto(`${base}/consola`)
  await signIn(page, ADMIN.username, ADMIN.password)
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link', { name: 'Sanciones', exact: true }).click()
  await page.getByRole('link', { name: 'Informes' }).click()
  await page.getByRole('heading', { level: 1, name: 'Informes: Sanciones' }).waitFor()
  const importe = label('sanciones', 'importe', 'Importe')
  await page.getByLabel('Agrupar por').selectOption('estado')
  await page.getByLabel(`Sumar ${importe}`, { exact: true }).check()
  await page.getByRole('button', { name: 'Ver informe' }).click()
  await page.getByLabel('Gráfico de').selectOption('importe')
  await page.getByRole('button', { name: 'Ver informe' }).click()
  const table = page.getByRole('region', { name: /^Registros por / }).getByRole('table')
  const euros = fields.sanciones!.find((f) => f.nombre === 'importe')?.formato === 'euros'
  await expect.poll(() => table.locator('thead th').allTextContents()).toEqual([label('sanciones', 'estado', 'Estado'), 'Registros', `Suma de ${importe}`])
  await expect.poll(() => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))).toEqual([[valueLabel('sanciones', 'estado', 'borrador'), '2', euros ? '300,50\u00a0€' : '300,5']])
  // The chart draws the sum, its value written as the table writes it.
  expect(await page.locator('svg.chart text').allTextContents()).toContain(euros ? '300,50\u00a0€' : '300,5')
  expect(new URL(w.urls.filter((u) => u.includes('/sanciones/resumen?')).at(-1)!).searchParams.get('medidas')).toBe('suma:importe')
  await checkScreen(page, 'informe-suma')
  await expectClean(w)
  await page.context().close()
})

it('opens every module\'s report with its default grouping, with no error and no axe-core violation', async () => {
  const { base, browser } = server()
  const w = await watchedPage(browser, base, 1280)
  const { page } = w
  await page.goto(`${base}/consola`)
  await signIn(page, ADMIN.username, ADMIN.password)
  const nav = page.getByRole('navigation', { name: 'Módulos' })
  await nav.getByRole('link').first().waitFor()
  for (const name of await nav.getByRole('link').allTextContents()) {
    await nav.getByRole('link', { name, exact: true }).click()
    await page.getByRole('link', { name: 'Informes' }).click()
    await page.getByRole('heading', { level: 1, name: `Informes: ${name}` }).waitFor()
    await page.getByRole('region', { name: /^Registros por / }).waitFor()
    await expect.poll(() => page.locator('[aria-busy="true"]').count()).toBe(0)
    expect(await page.locator('p.error').count(), name).toBe(0)
  }
  await checkScreen(page, 'informe-ultimo-modulo')
  await expectClean(w)
  await page.context().close()
})
