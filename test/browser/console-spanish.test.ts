/**
 * A console a force can go live on (docs/user-guide.md "Console"), in
 * Debian's Chromium at 768 and 1280 px with a Spanish and an English
 * browser language: dates `dd/mm/aaaa hh:mm` and an amount in euros
 * `12.345,50 €` in the list and the record; date inputs in Spanish order
 * and a decimal comma read as the API takes them (checked through the API); people by
 * name (created by, history, a reference to personal) with the id on
 * hover, from one GET /directorio per screen; a witness's DNI withheld
 * from a role without `descifrar` shown `Restringido`; a user linked to
 * their staff record in Administrar usuarios, with no password asked on
 * an edit. Fields, choices and states by the default modules.yaml's
 * labels (console-labels.test.ts checks them apart). axe-core on each screen.
 */
import { readFileSync } from 'node:fs'
import { beforeAll, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { parseRegistry } from '../../core/registry/load.js'
import { ADMIN, PASSWORD } from '../helpers/app.js'
import { call, validDni } from '../helpers/http.js'
import { createUser } from '../helpers/users.js'
import { checkScreen, createRecord, expectClean, signIn, useConsoleServer, watchedPage, type Watched } from './console-page.js'

// The sanctions' list shows the amount and the officer (docs/administrator-guide.md "modules.yaml reference", list_columns).
const yaml = readFileSync('modules.yaml', 'utf8').replace(/(\n {2}sanciones:\n)/, '$1    list_columns: [infractor_nombre, fecha_infraccion, importe, agente_denunciante, estado]\n')
const server = useConsoleServer({ registry: parseRegistry(yaml, 'modules.yaml') })
let staff: string, other: string, adminId: string
const NBSP = /\u00a0/g

const post = async (path: string, body: Record<string, unknown>): Promise<string> => createRecord(server(), path, body)

beforeAll(async () => {
  staff = await post('personal', { tip: '90001', nif: validDni(90001), nombre: 'Rigoberta', apellidos: 'Menchú Pérez', escala: 'oficial' })
  other = await post('personal', { tip: '90002', nif: validDni(90002), nombre: 'Clara', apellidos: 'Campoamor', escala: 'inspector' })
  adminId = (await call(server().app, 'GET', '/me', { token: server().admin })).body.data._id
})

async function signedIn (width: number, locale: string, user = { username: ADMIN.username, password: ADMIN.password }): Promise<Watched> {
  const w = await watchedPage(server().browser, server().base, width, locale)
  await w.page.goto(`${server().base}/consola`)
  expect(await w.page.evaluate('navigator.language')).toBe(locale)
  await signIn(w.page, user.username, user.password)
  await w.page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  return w
}

const go = async (page: Page, hash: string): Promise<void> => { await page.evaluate(`location.hash = ${JSON.stringify(hash)}`) }
const text = async (page: Page, selector: string): Promise<string> => ((await page.locator(selector).textContent()) ?? '').replace(NBSP, ' ')

for (const [width, locale] of [[1280, 'es-ES'], [768, 'en-US'], [1280, 'en-US'], [768, 'es-ES']] as const) {
  it(`shows dates, amounts and people in Spanish and reads Spanish input back (${width} px, ${locale})`, async () => {
    const infractor = `Infractor ${width} ${locale}`
    const id = await post('sanciones', { tipo: 'trafico', infractor_nombre: infractor, fecha_infraccion: '2026-06-01 10:30:00', lugar_infraccion: 'Calle Mayor', importe: 12345.5, agente_denunciante: staff })
    await post('sanciones', { tipo: 'trafico', infractor_nombre: `${infractor} (2)`, fecha_infraccion: '2026-06-03 08:05:00', lugar_infraccion: 'Plaza', importe: 90, agente_denunciante: other })
    const w = await signedIn(width, locale)
    const { page } = w

    // The list: Spanish date and amount, the officer by name with the id on hover, one directory request for the page.
    await go(page, `#/sanciones?infractor_nombre%5Bcontiene%5D=${encodeURIComponent(infractor)}`)
    await page.getByRole('status').filter({ hasText: '2 registros' }).waitFor()
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Referencia', 'Nombre del infractor', 'Fecha de la infracción', 'Importe', 'Agente denunciante', 'Estado'])
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: id }) })
    const person = row.locator('.person')
    await person.waitFor()
    expect((await row.getByRole('cell').allTextContents()).map((t) => t.replace(NBSP, ' '))).toEqual([infractor, '01/06/2026 10:30', '12.345,50 €', 'Rigoberta Menchú Pérez', 'Borrador'])
    expect(await person.getAttribute('title')).toBe(staff)
    await page.getByText('Clara Campoamor').waitFor()
    const asked = w.urls.filter((u) => u.includes('/directorio?'))
    expect(asked).toHaveLength(1)
    expect(new URL(asked[0]!).searchParams.get('ids')!.split(',').sort()).toEqual([staff, other].sort())
    await checkScreen(page, `es-listado-${width}-${locale}`)

    // A date filter typed in Spanish order: sent as the API's range.
    await page.getByLabel('Fecha de la infracción desde').fill('31/02/2026')
    await page.getByRole('button', { name: 'Buscar' }).click()
    await page.locator('#f-fecha_infraccion-gte-error').waitFor()
    expect(await page.getByLabel('Fecha de la infracción desde').getAttribute('aria-invalid')).toBe('true')
    await page.getByLabel('Fecha de la infracción desde').fill('02/06/2026')
    await page.getByRole('button', { name: 'Buscar' }).click()
    await page.getByRole('status').filter({ hasText: '1 registro' }).waitFor()
    expect(new URL(w.urls.filter((u) => u.includes('/sanciones?')).at(-1)!).searchParams.get('fecha_infraccion[gte]')).toBe('2026-06-02 00:00:00')

    // The record: the same formats; created by and the history by name.
    await go(page, `#/sanciones/${id}`)
    await page.getByRole('heading', { name: 'Historial' }).waitFor()
    const field = (label: string): string => `.fields div:has(> dt:text-is("${label}")) dd`
    expect(await text(page, field('Importe'))).toBe('12.345,50 €')
    expect(await text(page, field('Fecha de la infracción'))).toBe('01/06/2026 10:30')
    expect(await text(page, field('Creado'))).toMatch(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}$/)
    await page.locator(`${field('Creado por')} .person`).waitFor()
    expect(await text(page, field('Creado por'))).toBe('Administrador')
    expect(await page.locator(`${field('Creado por')} .person`).getAttribute('title')).toBe(adminId)
    await page.getByRole('link', { name: `90001 Rigoberta Menchú Pérez (${staff})` }).waitFor()
    // The history draws its authors' names when the directory answers, which may be after the fields'.
    await page.locator('.timeline li').filter({ hasText: 'por Administrador' }).first().waitFor()
    expect(await text(page, '.timeline li')).toMatch(/^Versión 1: Creación, \d{2}\/\d{2}\/\d{4} \d{2}:\d{2}, por Administrador/)
    expect(await page.getByRole('button', { name: 'Pasar a «Notificada»' }).count()).toBe(1)
    await checkScreen(page, `es-registro-${width}-${locale}`)

    // The form: Spanish order and a decimal comma whatever the browser's language; a day that does not exist refused in Spanish.
    await page.getByRole('link', { name: 'Editar' }).click()
    await page.getByRole('heading', { level: 1, name: `Editar ${id}` }).waitFor()
    // By id: its label 'Importe' is part of 'Importe reducido'.
    const importe = page.locator('#campo-importe')
    const fecha = page.getByLabel('Fecha de la infracción')
    expect(await importe.getAttribute('type')).toBe('text')
    expect(await fecha.getAttribute('type')).toBe('text')
    expect(await importe.inputValue()).toBe('12345,50')
    expect(await fecha.inputValue()).toBe('01/06/2026 10:30')
    await importe.fill('200,50')
    await fecha.fill('02/06/2026 11:45')
    await page.getByLabel('Fecha de notificación').fill('31/02/2026')
    await page.getByRole('button', { name: 'Guardar' }).click()
    expect(await page.locator('#campo-fecha_notificacion-error').textContent()).toBe('debe ser una fecha válida dd/mm/aaaa (por ejemplo, 01/06/2026)')
    await checkScreen(page, `es-formulario-${width}-${locale}`)
    await page.getByLabel('Fecha de notificación').fill('15/06/2026')
    await page.getByRole('button', { name: 'Guardar' }).click()
    await page.getByRole('heading', { name: 'Historial' }).waitFor()
    const stored = (await call(server().app, 'GET', `/sanciones/${id}`, { token: server().admin })).body.data
    expect(stored).toMatchObject({ importe: 200.5, fecha_infraccion: '2026-06-02 11:45:00', fecha_notificacion: '2026-06-15', _version: 2 })
    await expect.poll(() => text(page, field('Importe'))).toBe('200,50 €')
    expect(await text(page, field('Fecha de notificación'))).toBe('15/06/2026')
    await expectClean(w)
    await page.context().close()
  })
}

it('shows a witness\'s DNI withheld from a role without descifrar as Restringido, as a top-level field', async () => {
  const id = await post('denuncias', {
    denunciante_nombre: 'Ana Pérez', denunciante_dni: '12345678Z', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Sustracción',
    testigos: [{ nombre: 'Luis Gil', dni: validDni(4242), declaracion: 'Vio a dos personas' }, { nombre: 'Eva Ruiz' }],
  })
  const consulta = await createUser(server().app, server().admin, 'consulta')
  const w = await signedIn(768, 'es-ES', { username: consulta.username, password: PASSWORD })
  const { page } = w
  await go(page, `#/denuncias/${id}`)
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  const items = page.locator('.fields .items li')
  expect(await items.count()).toBe(2)
  expect((await items.first().textContent())!).toMatch(/^Testigo 1 · Nombre: Luis Gil · DNI: Restringido · Teléfono: Restringido · Domicilio: Restringido · Declaración: Vio a dos personas$/)
  expect(await items.nth(1).locator('.restricted').count()).toBe(3)
  expect(await page.locator('.fields div:has(> dt:text-is("DNI del denunciante")) dd .restricted').count()).toBe(1)
  expect(await page.getByText(validDni(4242)).count()).toBe(0)
  await checkScreen(page, 'es-testigo-restringido')
  await expectClean(w)
  await page.context().close()
})

it('links a user to their staff record in Administrar usuarios, never asking for a password on an edit', async () => {
  const user = await createUser(server().app, server().admin, 'agente', { nombre: 'Agente Sin Ficha' })
  const w = await signedIn(1280, 'en-US')
  const { page } = w
  await page.getByRole('navigation', { name: 'Herramientas' }).getByRole('link', { name: 'Administrar usuarios' }).click()
  await page.getByRole('heading', { level: 1, name: 'Administración de usuarios' }).waitFor()
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: user.username, exact: true }) })
  await row.getByRole('button', { name: `Gestionar ${user.username}` }).click()
  const panel = page.getByRole('region', { name: `Usuario ${user.username}` })
  const data = panel.getByRole('form', { name: `Datos de ${user.username}` })
  await data.waitFor()
  // The user's data: no password among them; a new one has its own form.
  expect(await data.locator('input[type="password"]').count()).toBe(0)
  expect(await data.getByLabel('Nombre completo').inputValue()).toBe('Agente Sin Ficha')
  const picker = data.getByRole('combobox', { name: 'Ficha de personal' })
  await picker.pressSequentially('Rigoberta')
  await page.getByRole('option', { name: `90001 Rigoberta Menchú Pérez (${staff})` }).click()
  await checkScreen(page, 'es-usuario-ficha')
  await data.getByRole('button', { name: 'Guardar datos' }).click()
  await panel.getByRole('status').filter({ hasText: 'Datos guardados' }).waitFor()
  expect((await call(server().app, 'GET', `/usuarios/${user.id}`, { token: server().admin })).body.data).toMatchObject({ personal_id: staff, nombre: 'Agente Sin Ficha' })
  await expect.poll(() => row.locator('.person').textContent()).toBe('Rigoberta Menchú Pérez')
  expect(await row.locator('.person').getAttribute('title')).toBe(staff)

  // A new user linked at once; its password asked for on creation only.
  const username = `ficha-${process.pid}`
  const create = page.getByRole('region', { name: 'Nuevo usuario' })
  await create.getByLabel('Nombre de usuario').fill(username)
  await create.getByLabel('Nombre completo').fill('Clara Nueva')
  await create.getByLabel('Contraseña inicial').fill(PASSWORD)
  await create.getByLabel('Rol', { exact: true }).selectOption('agente')
  await create.getByRole('combobox', { name: 'Ficha de personal' }).pressSequentially('Campoamor')
  await page.getByRole('option', { name: `90002 Clara Campoamor (${other})` }).click()
  await create.getByRole('button', { name: 'Crear usuario' }).click()
  await page.getByRole('status').filter({ hasText: `Usuario creado: ${username}` }).waitFor()
  expect((await call(server().app, 'GET', `/usuarios?username=${username}`, { token: server().admin })).body.data.records[0].personal_id).toBe(other)

  // The module's own edit form asks for no password either; its new-record form does.
  await go(page, `#/usuarios/${user.id}/editar`)
  await page.getByRole('heading', { level: 1, name: `Editar ${user.id}` }).waitFor()
  expect(await page.locator('#campo-password').count()).toBe(0)
  expect(await page.locator('input[type="password"]').count()).toBe(0)
  await checkScreen(page, 'es-usuario-editar')
  await go(page, '#/usuarios/_nuevo')
  await page.getByRole('heading', { level: 1, name: 'Nuevo registro de Usuarios' }).waitFor()
  expect(await page.locator('#campo-password').count()).toBe(1)
  await expectClean(w)
  await page.context().close()
})
