/**
 * The console's forms, record actions and files (SPEC S19 "Forms", "A
 * record screen"; S22; docs/user-guide.md "Console") in Debian's Chromium:
 * a create refused in the browser, then by the API (its `detalles` beside
 * the field), then saved with a staff member picked from the keyboard in
 * the ref picker and a witness added; an edit meeting a version conflict
 * (the record changed through the API meanwhile) reloaded with the user's
 * changes kept; a state move; delete and restore; an upload by the file
 * picker and by drag-and-drop with its preview and custody; every
 * module's form; a list's `list_columns` declared in modules.yaml after a
 * restart; a read-only role offered no form, action or upload. axe-core on
 * each new screen and dialog. `npm run test:browser`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Browser, Page } from 'playwright-core'
import { readFileSync } from 'node:fs'
import { loadRegistry, parseRegistry } from '../../core/registry/load.js'
import { ADMIN, PASSWORD, createHarness, type Harness } from '../helpers/app.js'
import { createUser } from '../helpers/users.js'
import { call, login, validDni } from '../helpers/http.js'
import { checkScreen, launch, watchedPage, type Watched } from './console-page.js'
import { listenApp } from '../helpers/free-port.js'

let h: Harness, app: FastifyInstance, browser: Browser, base: string, admin: string
let agent: string
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
/** A one-page PDF showing `text` (objects, cross-reference table, trailer). */
function minimalPdf (text: string): Buffer {
  const stream = `BT /F1 18 Tf 20 40 Td (${text}) Tj ET`
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>']
  let out = '%PDF-1.4\n'
  const offsets = objects.map((o, i) => { const at = out.length; out += `${i + 1} 0 obj\n${o}\nendobj\n`; return at })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}
const DENUNCIA = { denunciante_nombre: 'Ana Ruiz', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Hechos de prueba' }

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  base = await listenApp(app)
  admin = await login(app)
  const res = await call(app, 'POST', '/personal', { token: admin, body: { tip: '90001', nif: validDni(90001), nombre: 'Rigoberta', apellidos: 'Menchú Pérez', escala: 'oficial' } })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  agent = res.body.data._id
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  await h?.close()
})

async function signedIn (width?: number, at = base, user = { username: ADMIN.username, password: ADMIN.password }): Promise<Watched> {
  const w = await watchedPage(browser, at, width)
  await w.page.goto(`${at}/consola`)
  await w.page.getByLabel('Usuario').fill(user.username)
  await w.page.getByLabel('Contraseña').fill(user.password)
  await w.page.getByRole('button', { name: 'Entrar' }).click()
  await w.page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  return w
}

async function openRecord (page: Page, id: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(`#/denuncias/${id}`)}`)
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
}

/**
 * As console.test.ts's, but a preview's `blob:` URL of the console's own
 * origin is no foreign request, nor are the files of Chromium's built-in
 * PDF viewer; a 409 is the conflict the test causes.
 */
async function expectClean (w: Watched): Promise<void> {
  expect(w.foreign.filter((u) => !u.startsWith(`blob:${w.page.url().split('/consola')[0]!}/`) && !/^chrome(-extension)?:\/\//.test(u))).toEqual([])
  expect(w.problems.filter((p) => !/status of 409/.test(p))).toEqual([])
  for (const token of w.tokens) expect(w.urls.filter((u) => u.includes(token))).toEqual([])
}

/** A new denuncia (through the API) open on its screen for a signed-in superadmin. */
async function onNewRecord (width?: number): Promise<{ id: string, w: Watched, page: Page }> {
  const res = await call(app, 'POST', '/denuncias', { token: admin, body: { ...DENUNCIA, agente_asignado: agent } })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  const w = await signedIn(width)
  await openRecord(w.page, res.body.data._id)
  return { id: res.body.data._id, w, page: w.page }
}

async function finish (w: Watched): Promise<void> {
  await expectClean(w)
  await w.page.context().close()
}

it('creates a record: refused in the browser, then by the API beside its field, then saved with a ref picked from the keyboard', async () => {
  const w = await signedIn()
  const { page } = w
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link', { name: 'Denuncias', exact: true }).click()
  await page.getByRole('link', { name: 'Nuevo' }).click()
  await page.getByRole('heading', { level: 1, name: 'Nuevo registro de Denuncias' }).waitFor()
  await checkScreen(page, 'formulario-nuevo')

  // Nothing filled in, a DNI not of a DNI's shape (the field's `patron`): refused before any request.
  const posts = (): number => w.urls.filter((u) => u.endsWith('/denuncias')).length
  const before = posts()
  await page.getByLabel('DNI del denunciante').fill('1234-5678')
  await page.getByRole('button', { name: 'Guardar' }).click()
  await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Revise los \d+ campos marcados$/)
  expect(await page.getByLabel('Nombre del denunciante').getAttribute('aria-invalid')).toBe('true')
  expect(await page.locator('#campo-denunciante_nombre-error').textContent()).toBe('es obligatorio')
  expect(await page.locator('#campo-denunciante_dni-error').textContent()).toBe('no tiene el formato esperado')
  expect(await page.evaluate('document.activeElement?.id')).toBe('campo-denunciante_nombre')
  await checkScreen(page, 'formulario-errores')

  // A DNI of the right shape with a wrong letter: the console repeats no check of the API's, whose detalles show beside the field.
  await page.getByLabel('DNI del denunciante').fill('12345678A')
  await page.getByLabel('Nombre del denunciante').fill('Ana Ruiz')
  await page.getByRole('textbox', { name: 'Tipo de denuncia', exact: true }).fill('hurto')
  await page.getByLabel('Fecha de los hechos').fill('01/06/2026 10:30')
  await page.getByLabel('Lugar de los hechos').fill('Calle Mayor 3')
  await page.getByLabel('Descripción').fill('Sustracción de un bolso')
  await page.getByLabel('Agente asignado').fill('PER-2026-99999')
  await page.getByRole('button', { name: 'Guardar' }).click()
  await expect.poll(() => page.locator('#campo-denunciante_dni-error').textContent()).toBe('letra de control incorrecta')
  expect(posts()).toBe(before + 1)

  // Filled in as the API checks it, with a staff reference that does not exist: the API's detalles beside that field.
  await page.getByLabel('DNI del denunciante').fill(validDni(4242))
  await page.getByRole('button', { name: 'Guardar' }).click()
  await page.locator('#campo-agente_asignado-error').waitFor()
  expect(posts()).toBe(before + 2)
  expect(await page.getByRole('combobox', { name: 'Agente asignado' }).getAttribute('aria-invalid')).toBe('true')
  await checkScreen(page, 'formulario-error-api')

  // The ref picker from the keyboard: type the start of a TIP or a name, arrow down, Enter.
  const picker = page.getByRole('combobox', { name: 'Agente asignado' })
  await picker.fill('')
  await picker.pressSequentially('9000')
  await page.getByRole('option', { name: `90001 Rigoberta Menchú Pérez (${agent})` }).waitFor()
  await picker.fill('')
  await picker.pressSequentially('rigob menc')
  await page.getByRole('option', { name: `90001 Rigoberta Menchú Pérez (${agent})` }).waitFor()
  expect(await picker.getAttribute('aria-expanded')).toBe('true')
  await checkScreen(page, 'selector-referencia')
  await picker.press('ArrowDown')
  expect(await picker.getAttribute('aria-activedescendant')).toBe(await page.getByRole('option').first().getAttribute('id'))
  await picker.press('Enter')
  expect(await picker.getAttribute('aria-expanded')).toBe('false')
  expect(await picker.inputValue()).toBe(`90001 Rigoberta Menchú Pérez (${agent})`)

  // A witness: a repeatable group.
  await page.getByRole('button', { name: 'Añadir testigo' }).click()
  await page.getByRole('group', { name: 'Testigo 1' }).getByLabel('Nombre').fill('Luis Gómez')
  await page.getByRole('group', { name: 'Testigo 1' }).getByLabel('Declaración').fill('Vio a una persona correr')
  await checkScreen(page, 'formulario-grupo')
  await page.getByRole('button', { name: 'Guardar' }).click()
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)
  const stored = (await call(app, 'GET', `/denuncias/${id}`, { token: admin })).body.data
  expect(stored).toMatchObject({ denunciante_nombre: 'Ana Ruiz', fecha_hechos: '2026-06-01 10:30:00', agente_asignado: agent, estado: 'pendiente', testigos: [{ nombre: 'Luis Gómez', declaracion: 'Vio a una persona correr' }] })
  // The related record by name, linked.
  await page.getByRole('link', { name: `90001 Rigoberta Menchú Pérez (${agent})` }).waitFor()
  await finish(w)
})

it('meets a version conflict on an edit: reloads the record and keeps the user\'s changes, then saves them', async () => {
  const { id, w, page } = await onNewRecord()
  await page.getByRole('link', { name: 'Editar' }).click()
  await page.getByRole('heading', { level: 1, name: `Editar ${id}` }).waitFor()
  await checkScreen(page, 'formulario-editar')
  await page.getByLabel('Lugar de los hechos').fill('Calle del Sol 5')

  // Meanwhile someone else changes the record through the API.
  expect((await call(app, 'PUT', `/denuncias/${id}`, { token: admin, body: { lugar_hechos: 'Calle de la Luna 1', observaciones: 'Cambiado por otro' } })).status).toBe(200)
  await page.getByRole('button', { name: 'Guardar' }).click()
  await page.getByRole('button', { name: 'Recargar el registro' }).waitFor()
  expect(await page.getByRole('alert').first().textContent()).toContain('Otra persona ha modificado este registro')
  expect(await page.getByLabel('Lugar de los hechos').inputValue()).toBe('Calle del Sol 5')
  await checkScreen(page, 'formulario-conflicto')

  await page.getByRole('button', { name: 'Recargar el registro' }).click()
  await page.getByText('Valor guardado ahora: Calle de la Luna 1').waitFor()
  await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('campo-lugar_hechos')
  expect(await page.getByLabel('Lugar de los hechos').inputValue()).toBe('Calle del Sol 5')
  expect(await page.getByLabel('Observaciones').inputValue()).toBe('Cambiado por otro')
  await checkScreen(page, 'formulario-recargado')
  await page.getByRole('button', { name: 'Guardar' }).click()
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  const stored = (await call(app, 'GET', `/denuncias/${id}`, { token: admin })).body.data
  expect(stored).toMatchObject({ lugar_hechos: 'Calle del Sol 5', observaciones: 'Cambiado por otro', _version: 3 })
  await finish(w)
})

it('moves the state by the button named by the target state, deletes after a dialog and restores, from the record and from the list', async () => {
  const { id, w, page } = await onNewRecord(768)
  expect(await page.getByRole('region', { name: 'Acciones' }).getByRole('button').allTextContents()).toEqual(['Imprimir', 'Pasar a «En investigación»', 'Pasar a «Archivada»', 'Eliminar'])
  await checkScreen(page, 'registro-acciones')
  await page.getByRole('button', { name: 'Pasar a «En investigación»' }).click()
  await page.getByRole('status').filter({ hasText: 'Estado cambiado a «En investigación»' }).waitFor()
  expect((await call(app, 'GET', `/denuncias/${id}`, { token: admin })).body.data.estado).toBe('investigacion')
  await page.getByRole('button', { name: 'Pasar a «Judicializada»' }).waitFor()
  await page.getByText('Versión 2').waitFor()

  await page.getByRole('button', { name: 'Eliminar' }).click()
  const dialog = page.getByRole('dialog', { name: `Eliminar ${id}` })
  await dialog.waitFor()
  await checkScreen(page, 'dialogo-eliminar')
  await dialog.getByRole('button', { name: 'Cancelar' }).press('Escape')
  expect(await dialog.isVisible()).toBe(false)
  expect((await call(app, 'GET', `/denuncias/${id}`, { token: admin })).status).toBe(200)
  await page.getByRole('button', { name: 'Eliminar' }).click()
  await dialog.getByRole('button', { name: 'Eliminar' }).click()
  await page.getByRole('button', { name: 'Restaurar' }).waitFor()
  expect((await call(app, 'GET', `/denuncias/${id}`, { token: admin })).status).toBe(404)
  await checkScreen(page, 'registro-eliminado')
  await page.getByRole('button', { name: 'Restaurar' }).click()
  await page.getByRole('status').filter({ hasText: 'Registro restaurado' }).waitFor()
  expect((await call(app, 'GET', `/denuncias/${id}`, { token: admin })).body.data).toMatchObject({ estado: 'investigacion', _version: 4 })

  // Deleted elsewhere: restored from the list of deleted records, which then opens it.
  expect((await call(app, 'DELETE', `/denuncias/${id}`, { token: admin })).status).toBe(200)
  await page.evaluate('location.hash = "#/denuncias?eliminados=si"')
  await page.getByRole('button', { name: `Restaurar ${id}` }).click()
  await page.getByRole('heading', { level: 1, name: `Denuncias: ${id}` }).waitFor()
  expect((await call(app, 'GET', `/denuncias/${id}`, { token: admin })).body.data._version).toBe(6)
  await finish(w)
})

it('uploads files by the picker and by dropping them, with a preview fetched with the token and each file\'s custody', async () => {
  const { id, w, page } = await onNewRecord()
  await page.getByRole('heading', { name: 'Archivos adjuntos', exact: true }).waitFor()
  await checkScreen(page, 'archivos')
  await page.getByLabel('Añadir archivos a archivos adjuntos').setInputFiles({ name: 'foto daños.png', mimeType: 'image/png', buffer: PNG })
  await page.getByText('Subido: foto daños.png').waitFor()

  // Dropped on the zone: the same upload.
  const drop = await page.evaluateHandle(`(() => {
    const dt = new DataTransfer()
    dt.items.add(new File(['Informe del agente'], 'informe.txt', { type: 'text/plain' }))
    return dt
  })()`)
  await page.locator('.drop').dispatchEvent('drop', { dataTransfer: drop })
  await page.getByText('Subido: informe.txt').waitFor()
  const files = (await call(app, 'GET', `/denuncias/${id}`, { token: admin })).body.data.adjuntos as Array<{ id: string, nombre: string, bytes: number }>
  expect(files.map((f) => [f.nombre, f.bytes])).toEqual([['foto daños.png', PNG.length], ['informe.txt', 18]])

  await page.getByRole('button', { name: 'Vista previa de foto daños.png' }).click()
  const img = page.getByRole('img', { name: 'Vista previa de foto daños.png' })
  await img.waitFor()
  expect(await img.getAttribute('src')).toMatch(/^blob:/)
  await expect.poll(() => img.evaluate((el: any) => el.naturalWidth as number)).toBe(1)
  await page.getByRole('button', { name: 'Custodia de foto daños.png' }).click()
  const custody = page.getByRole('table', { name: 'Cadena de custodia de foto daños.png' })
  await custody.waitFor()
  expect(await custody.locator('tbody tr td:first-child').allTextContents()).toEqual(['Subida', 'Descarga'])
  await checkScreen(page, 'archivos-vista-previa')
  // A PDF: shown in a frame from a blob: URL, by the browser's own viewer.
  await page.getByLabel('Añadir archivos a archivos adjuntos').setInputFiles({ name: 'acta.pdf', mimeType: 'application/pdf', buffer: minimalPdf('Atestado de prueba') })
  await page.getByText('Subido: acta.pdf').waitFor()
  await page.getByRole('button', { name: 'Vista previa de acta.pdf' }).click()
  expect(await page.locator('iframe[title="Vista previa de acta.pdf"]').getAttribute('src')).toMatch(/^blob:/)
  // Progress: a slow link (Chromium's network emulation) shows the upload's fraction as it goes.
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Network.enable')
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 100 * 1024 })
  await page.getByLabel('Añadir archivos a archivos adjuntos').setInputFiles({ name: 'grabación.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(400 * 1024, 7) })
  const bar = page.getByRole('progressbar', { name: 'Subiendo grabación.bin' })
  await bar.waitFor()
  await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 10_000 }).toBeGreaterThan(0)
  await checkScreen(page, 'archivos-subiendo')
  await page.getByText('Subido: grabación.bin').waitFor({ timeout: 30_000 })
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
  expect(await bar.count()).toBe(0)
  // A text file has no preview.
  expect(await page.getByRole('button', { name: 'Vista previa de informe.txt' }).count()).toBe(0)
  await finish(w)
})

it('generates every module\'s form from modules.yaml, each with no axe-core violation and an input per field', async () => {
  const registry = loadRegistry('modules.yaml')
  const w = await signedIn()
  const { page } = w
  for (const mod of registry.modules) {
    await page.evaluate(`location.hash = ${JSON.stringify(`#/${mod.path}/_nuevo`)}`)
    await page.getByRole('heading', { level: 1, name: `Nuevo registro de ${mod.label}` }).waitFor()
    // Every field but files and a state moved by buttons has its input, found by its label.
    const shown = mod.fields.filter((f) => f.type !== 'file' && !(f.name === mod.stateField && mod.transitions.length > 0))
    for (const f of shown.filter((x) => x.type !== 'array' || x.items === undefined)) {
      expect(await page.locator(`#campo-${f.name}`).count(), `${mod.name}.${f.name}`).toBe(1)
    }
    await checkScreen(page, `formulario-${mod.path}`)
  }
  await finish(w)
}, 300_000)

it('shows the list columns modules.yaml declares after a restart, with no change to the console', async () => {
  const text = readFileSync('modules.yaml', 'utf8').replace(/(\n {2}vehiculos:\n)/, '$1    list_columns: [marca, matricula, km_actuales]\n')
  const again = await h.app({ registry: parseRegistry(text, 'temp.yaml') })
  const at = await listenApp(again)
  const w = await signedIn(undefined, at)
  await w.page.getByRole('navigation', { name: 'Módulos' }).getByRole('link', { name: 'Vehículos' }).click()
  await w.page.getByRole('status').filter({ hasText: /registros?$/ }).waitFor()
  expect(await w.page.getByRole('columnheader').allTextContents()).toEqual(['Referencia', 'Marca', 'Matrícula', 'Kilómetros'])
  expect(w.urls.some((u) => u.includes('campos=marca%2Cmatricula%2Ckm_actuales'))).toBe(true)
  await finish(w)
  await again.close()
})

it('offers a read-only role no form, action or upload: its files still listed with their custody', async () => {
  const id = (await call(app, 'POST', '/denuncias', { token: admin, body: DENUNCIA })).body.data._id as string
  const uploaded = await app.inject({ method: 'POST', url: `/denuncias/${id}/archivos/adjuntos?nombre=foto.png`, headers: { authorization: `Bearer ${admin}`, 'content-type': 'image/png' }, payload: PNG })
  expect(uploaded.statusCode, uploaded.body).toBe(201)
  const consulta = await createUser(app, admin, 'consulta')
  const w = await signedIn(768, base, { username: consulta.username, password: PASSWORD })
  const { page } = w
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link', { name: 'Denuncias', exact: true }).click()
  await page.getByRole('status').filter({ hasText: /registros?$/ }).waitFor()
  expect(await page.getByRole('link', { name: 'Nuevo' }).count()).toBe(0)
  await openRecord(page, id)
  await page.getByRole('button', { name: 'Custodia de foto.png' }).click()
  await page.getByRole('table', { name: 'Cadena de custodia de foto.png' }).waitFor()
  // Printing is a read: the one action a read-only role has.
  expect(await page.getByRole('region', { name: 'Acciones' }).getByRole('button').allTextContents()).toEqual(['Imprimir'])
  expect(await page.getByRole('link', { name: 'Editar' }).count()).toBe(0)
  expect(await page.getByLabel('Añadir archivos a archivos adjuntos').count()).toBe(0)
  await checkScreen(page, 'registro-solo-lectura')
  await page.evaluate('location.hash = "#/denuncias/_nuevo"')
  await page.getByText('Su rol no puede crear registros de Denuncias.').waitFor()
  await finish(w)
})
