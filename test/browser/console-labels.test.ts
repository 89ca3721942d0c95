/**
 * What a person reads is the label modules.yaml gives (docs/user-guide.md
 * "Console", docs/administrator-guide.md "Labels"), in Debian's Chromium
 * at 768 and 1280 px with a Spanish and an English browser language, on
 * the default modules.yaml: a list's column headers and filter choices
 * (`Fecha de los hechos`, `En investigación`), a form's inputs, choices and
 * help texts (`Descripción`, its `ayuda` tied to the input), a record's
 * fields and state (`En investigación`), the state buttons (`Pasar a «En
 * investigación»`) and what they announce, the history's fields, a report
 * grouped by the state (its values' labels); an amount of a `format:
 * euros` field as `200,50 €` in a list and a record, whatever the
 * browser's language. axe-core on each screen.
 */
import { readFileSync } from 'node:fs'
import { beforeAll, expect, it } from 'vitest'
import type { Locator, Page } from 'playwright-core'
import { parseRegistry } from '../../core/registry/load.js'
import { ADMIN } from '../helpers/app.js'
import { call, validDni } from '../helpers/http.js'
import { checkScreen, createRecord, expectClean, signIn, useConsoleServer, watchedPage, type Watched } from './console-page.js'

// The sanctions' list shows the amount (docs/administrator-guide.md "modules.yaml reference", list_columns); every label is the default file's.
const yaml = readFileSync('modules.yaml', 'utf8').replace(/(\n {2}sanciones:\n)/, '$1    list_columns: [infractor_nombre, importe, importe_reducido, estado]\n')
const server = useConsoleServer({ registry: parseRegistry(yaml, 'modules.yaml') })
let staff: string
const NBSP = /\u00a0/g

const post = async (path: string, body: Record<string, unknown>): Promise<string> => createRecord(server(), path, body)

beforeAll(async () => {
  staff = await post('personal', { tip: '90001', nif: validDni(90001), nombre: 'Rigoberta', apellidos: 'Menchú Pérez', escala: 'oficial' })
})

async function signedIn (width: number, locale: string): Promise<Watched> {
  const w = await watchedPage(server().browser, server().base, width, locale)
  await w.page.goto(`${server().base}/consola`)
  expect(await w.page.evaluate('navigator.language')).toBe(locale)
  await signIn(w.page, ADMIN.username, ADMIN.password)
  await w.page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  return w
}

const go = async (page: Page, hash: string): Promise<void> => { await page.evaluate(`location.hash = ${JSON.stringify(hash)}`) }
const text = async (page: Page, selector: string): Promise<string> => ((await page.locator(selector).textContent()) ?? '').replace(NBSP, ' ')
/** A record's value by the label of its field. */
const field = (label: string): string => `.fields div:has(> dt:text-is("${label}")) dd`
const cells = (rows: Locator): Promise<string[][]> =>
  rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => (c.textContent ?? '').replace(/\u00a0/g, ' '))))

for (const [width, locale] of [[1280, 'es-ES'], [768, 'en-US'], [1280, 'en-US'], [768, 'es-ES']] as const) {
  it(`names fields, choices and states by their labels in a list, a form, a record, its state buttons and a report (${width} px, ${locale})`, async () => {
    const who = `Denunciante ${width} ${locale}`
    const denuncia = { tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Sustracción de un bolso', agente_asignado: staff }
    const id = await post('denuncias', { ...denuncia, denunciante_nombre: who })
    await post('denuncias', { ...denuncia, denunciante_nombre: `${who} (2)` })
    const archived = await post('denuncias', { ...denuncia, denunciante_nombre: `${who} (3)` })
    expect((await call(server().app, 'PUT', `/denuncias/${archived}`, { token: server().admin, body: { estado: 'archivada' } })).status).toBe(200)
    const w = await signedIn(width, locale)
    const { page } = w
    // Who is signed in, the role by its label in the users module.
    await expect.poll(() => page.locator('header .who').textContent()).toBe('Administrador (Superadministrador)')

    // The list: its columns and its filter's choices by their labels, a state by its value's label.
    await go(page, `#/denuncias?denunciante_nombre%5Bcontiene%5D=${encodeURIComponent(who)}`)
    await page.getByRole('status').filter({ hasText: '3 registros' }).waitFor()
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Referencia', 'Nombre del denunciante', 'Tipo de denuncia', 'Fecha de los hechos', 'Estado'])
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: id }) })
    expect(await row.getByRole('cell').allTextContents()).toEqual([who, 'hurto', '01/06/2026 10:30', 'Pendiente'])
    expect(await page.getByLabel('Estado', { exact: true }).locator('option').allTextContents()).toEqual(['(todos)', 'Pendiente', 'En investigación', 'Archivada', 'Judicializada'])
    expect(await page.getByLabel('Fecha de los hechos desde').count()).toBe(1)
    await checkScreen(page, `etiquetas-listado-${width}-${locale}`)

    // The record: fields by their labels, the state moved by the button named by the target state's label.
    await row.getByRole('link', { name: id }).click()
    await page.getByRole('heading', { name: 'Historial' }).waitFor()
    expect(await text(page, field('Fecha de los hechos'))).toBe('01/06/2026 10:30')
    expect(await text(page, field('Descripción'))).toBe('Sustracción de un bolso')
    expect(await text(page, field('Estado'))).toBe('Pendiente')
    expect(await text(page, field('Prioridad'))).toBe('Media')
    const actions = page.getByRole('region', { name: 'Acciones' })
    expect(await actions.getByRole('button').allTextContents()).toEqual(['Imprimir', 'Pasar a «En investigación»', 'Pasar a «Archivada»', 'Eliminar'])
    await checkScreen(page, `etiquetas-registro-${width}-${locale}`)
    await actions.getByRole('button', { name: 'Pasar a «En investigación»' }).click()
    await page.getByRole('status').filter({ hasText: 'Estado cambiado a «En investigación»' }).waitFor()
    await expect.poll(() => text(page, field('Estado'))).toBe('En investigación')
    expect((await call(server().app, 'GET', `/denuncias/${id}`, { token: server().admin })).body.data.estado).toBe('investigacion')
    expect(await actions.getByRole('button').allTextContents()).toEqual(['Imprimir', 'Pasar a «Archivada»', 'Pasar a «Judicializada»', 'Eliminar'])
    await page.getByText('Versión 2').waitFor()
    expect(await text(page, '.timeline li:nth-child(2)')).toContain('Campos: Estado')
    await checkScreen(page, `etiquetas-estado-${width}-${locale}`)

    // The form: inputs by their labels, a choice's values by theirs, help texts under the input and tied to it.
    await page.getByRole('link', { name: 'Editar' }).click()
    await page.getByRole('heading', { level: 1, name: `Editar ${id}` }).waitFor()
    const descripcion = page.getByRole('textbox', { name: 'Descripción', exact: true })
    expect(await descripcion.inputValue()).toBe('Sustracción de un bolso')
    expect(await page.locator('#campo-descripcion-ayuda').textContent()).toBe('Los hechos tal como los relata el denunciante')
    expect((await descripcion.getAttribute('aria-describedby'))!.split(' ')).toContain('campo-descripcion-ayuda')
    expect(await page.getByRole('textbox', { name: 'Tipo de denuncia', exact: true }).inputValue()).toBe('hurto')
    expect(await page.locator('#campo-tipo-ayuda').textContent()).toBe('Por ejemplo: hurto, robo, lesiones, daños')
    expect(await page.locator('#campo-agente_asignado-ayuda').textContent()).toBe('Necesario para pasar la denuncia a «En investigación»')
    expect(await page.getByRole('textbox', { name: 'Fecha de los hechos', exact: true }).inputValue()).toBe('01/06/2026 10:30')
    expect(await page.getByRole('textbox', { name: 'DNI del denunciante', exact: true }).count()).toBe(1)
    const prioridad = page.getByRole('combobox', { name: 'Prioridad', exact: true })
    expect(await prioridad.locator('option').allTextContents()).toEqual(['(sin valor)', 'Baja', 'Media', 'Alta', 'Urgente'])
    await prioridad.selectOption({ label: 'Alta' })
    await page.getByRole('button', { name: 'Añadir testigo' }).click()
    const testigo = page.getByRole('group', { name: 'Testigo 1' })
    await testigo.getByRole('textbox', { name: 'Nombre', exact: true }).fill('Luis Gil')
    await testigo.getByRole('textbox', { name: 'Declaración', exact: true }).fill('Lo vio todo')
    expect(await testigo.getByRole('textbox', { name: 'Teléfono', exact: true }).count()).toBe(1)
    await checkScreen(page, `etiquetas-formulario-${width}-${locale}`)
    await page.getByRole('button', { name: 'Guardar' }).click()
    await page.getByRole('heading', { name: 'Historial' }).waitFor()
    await expect.poll(() => text(page, field('Prioridad'))).toBe('Alta')
    expect(await text(page, `${field('Testigos')} li`)).toBe('Testigo 1 · Nombre: Luis Gil · DNI: — · Teléfono: — · Domicilio: — · Declaración: Lo vio todo')
    expect((await call(server().app, 'GET', `/denuncias/${id}`, { token: server().admin })).body.data).toMatchObject({ prioridad: 'alta', testigos: [{ nombre: 'Luis Gil', declaracion: 'Lo vio todo' }] })

    // The report of the listed records grouped by the state: each group by its value's label.
    await go(page, `#/denuncias?denunciante_nombre%5Bcontiene%5D=${encodeURIComponent(who)}`)
    await page.getByRole('status').filter({ hasText: '3 registros' }).waitFor()
    await page.getByRole('link', { name: 'Informes' }).click()
    await page.getByRole('heading', { level: 1, name: 'Informes: Denuncias' }).waitFor()
    expect(await page.getByLabel('Agrupar por').locator('option', { hasText: 'Fecha de los hechos' }).count()).toBe(1)
    await page.getByLabel('Agrupar por').selectOption({ label: 'Estado' })
    await page.getByLabel('Y por').selectOption({ label: '(nada más)' })
    await page.getByRole('button', { name: 'Ver informe' }).click()
    const report = page.getByRole('region', { name: 'Registros por estado' })
    await expect.poll(() => report.getByRole('table').locator('thead th').allTextContents()).toEqual(['Estado', 'Registros'])
    expect(new URL(w.urls.filter((u) => u.includes('/denuncias/resumen?')).at(-1)!).searchParams.get('agrupar')).toBe('estado')
    expect((await cells(report.getByRole('table').locator('tbody tr'))).sort()).toEqual([['Archivada', '1'], ['En investigación', '1'], ['Pendiente', '1']])
    await checkScreen(page, `etiquetas-informe-${width}-${locale}`)
    await expectClean(w)
    await page.context().close()
  })

  it(`shows an amount of a euros field as 200,50 € in a list and a record (${width} px, ${locale})`, async () => {
    const infractor = `Infractor ${width} ${locale}`
    const id = await post('sanciones', { tipo: 'trafico', infractor_nombre: infractor, fecha_infraccion: '2026-06-01 10:30:00', lugar_infraccion: 'Calle Mayor', importe: 200.5, importe_reducido: 100.25, agente_denunciante: staff })
    const w = await signedIn(width, locale)
    const { page } = w
    await go(page, `#/sanciones?infractor_nombre%5Bcontiene%5D=${encodeURIComponent(infractor)}`)
    await page.getByRole('status').filter({ hasText: '1 registro' }).waitFor()
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Referencia', 'Nombre del infractor', 'Importe', 'Importe reducido', 'Estado'])
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: id }) })
    expect((await row.getByRole('cell').allTextContents()).map((t) => t.replace(NBSP, ' '))).toEqual([infractor, '200,50 €', '100,25 €', 'Borrador'])
    await checkScreen(page, `euros-listado-${width}-${locale}`)

    await row.getByRole('link', { name: id }).click()
    await page.getByRole('heading', { name: 'Historial' }).waitFor()
    expect(await text(page, field('Importe'))).toBe('200,50 €')
    expect(await text(page, field('Importe reducido'))).toBe('100,25 €')
    expect(await text(page, field('Tipo de sanción'))).toBe('Tráfico')
    expect(await page.getByRole('region', { name: 'Acciones' }).getByRole('button', { name: 'Pasar a «Notificada»' }).count()).toBe(1)
    expect(await text(page, `#requiere-notificada`)).toBe('Requiere: Fecha de notificación')
    await checkScreen(page, `euros-registro-${width}-${locale}`)
    await expectClean(w)
    await page.context().close()
  })
}
