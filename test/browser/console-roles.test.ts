/**
 * The console for every role and every module (SPEC S19, issue 26 "Every
 * S19 item works for every role on the default modules.yaml, and a module
 * added to the file appears after a restart with no front-end change";
 * docs/user-guide.md "Console") in Debian's Chromium: a list filtered by a
 * reference picked from the keyboard, by number and time ranges, by
 * `contiene` and by a boolean;
 * each role of modules.yaml sees in `Módulos` exactly what GET /me/modulos
 * gives it, and each list and a record of each, with no axe-core
 * violation; a module appended to modules.yaml appears after a restart,
 * takes a record through its generated form and lists it; a file removed
 * from a record. `npm run test:browser`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Browser, Page } from 'playwright-core'
import { readFileSync } from 'node:fs'
import { parseRegistry } from '../../core/registry/load.js'
import { ADMIN, PASSWORD, createHarness, type Harness } from '../helpers/app.js'
import { createUser } from '../helpers/users.js'
import { call, login, validDni } from '../helpers/http.js'
import { checkScreen, expectClean, launch, signIn, watchedPage, type Watched } from './console-page.js'
import { listenApp } from '../helpers/free-port.js'

let h: Harness, app: FastifyInstance, browser: Browser, base: string, admin: string
let staff: string

const DENUNCIA = { denunciante_nombre: 'Ana Ruiz', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Hechos de prueba' }

async function created (path: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(app, 'POST', `/${path}`, { token: admin, body })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data._id as string
}

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
  base = await listenApp(app)
  admin = await login(app)
  staff = await created('personal', { tip: '90002', nif: validDni(90002), nombre: 'Clara', apellidos: 'Campoamor Rodríguez', escala: 'oficial' })
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  await h?.close()
})

async function signedIn (at = base, user = { username: ADMIN.username, password: ADMIN.password }, width?: number): Promise<Watched> {
  const w = await watchedPage(browser, at, width)
  await w.page.goto(`${at}/consola`)
  await signIn(w.page, user.username, user.password)
  await w.page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  return w
}

async function openList (page: Page, label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link', { name: label, exact: true }).click()
  await page.getByRole('heading', { level: 1, name: label }).waitFor()
  await page.getByRole('status').filter({ hasText: /registros?$/ }).waitFor()
}

/** The total the list shows once the request for `param` has been answered. */
async function totalAfter (w: Watched, path: string, param: string, value: string): Promise<string> {
  await w.page.getByRole('button', { name: 'Buscar', exact: true }).click()
  await expect.poll(() => w.urls.some((u) => u.startsWith(`${base}/${path}?`) && new URL(u).searchParams.get(param) === value)).toBe(true)
  await expect.poll(() => w.page.locator('.table-wrap[aria-busy]').count()).toBe(0)
  return (await w.page.getByRole('status').filter({ hasText: /registros?$/ }).textContent()) ?? ''
}

it('filters a list by a reference picked from the keyboard, by number and time ranges, contiene and a yes/no field', async () => {
  const mine = await created('denuncias', { ...DENUNCIA, agente_asignado: staff })
  await created('denuncias', DENUNCIA)
  await created('vehiculos', { matricula: '1111-BBB', tipo: 'patrulla', km_actuales: 1000 })
  await created('vehiculos', { matricula: '2222-CCC', tipo: 'moto', km_actuales: 52000 })
  const w = await signedIn()
  const { page } = w
  await openList(page, 'Denuncias')
  const picker = page.getByRole('combobox', { name: 'Agente asignado' })
  await picker.focus()
  await page.keyboard.type('Campoamor')
  await page.getByRole('listbox', { name: 'Resultados de Personal' }).getByRole('option', { name: /Clara Campoamor/ }).waitFor()
  await picker.press('ArrowDown')
  await picker.press('Enter')
  expect(await picker.inputValue()).toContain(staff)
  await checkScreen(page, 'filtro-referencia')
  expect(await totalAfter(w, 'denuncias', 'agente_asignado', staff)).toBe('1 registro')
  expect(await page.getByRole('row').nth(1).getByRole('link').textContent()).toBe(mine)
  // The address keeps the filter: a reload of the screen shows it picked, by name.
  expect(page.url()).toContain(`agente_asignado=${encodeURIComponent(staff)}`)
  await expect.poll(() => picker.inputValue()).toMatch(/Clara Campoamor Rodríguez/)

  // A name typed but not picked is no record's reference: the API matches it exactly, and nothing is listed.
  await picker.fill('Nadie')
  expect(await totalAfter(w, 'denuncias', 'agente_asignado', 'Nadie')).toBe('0 registros')

  await openList(page, 'Vehículos')
  await page.getByLabel('Kilómetros desde').fill('20000')
  expect(await totalAfter(w, 'vehiculos', 'km_actuales[gte]', '20000')).toBe('1 registro')
  expect(await page.getByRole('row').nth(1).textContent()).toContain('2222-CCC')
  await page.getByLabel('Matrícula contiene').fill('1111')
  expect(await totalAfter(w, 'vehiculos', 'matricula[contiene]', '1111')).toBe('0 registros')

  // A time range.
  await created('turnos', { agente_id: staff, fecha: '2026-06-05', tipo_turno: 'mañana', servicio: 'oficina', hora_inicio: '07:00' })
  await created('turnos', { agente_id: staff, fecha: '2026-06-05', tipo_turno: 'tarde', servicio: 'oficina', hora_inicio: '15:00' })
  await openList(page, 'Turnos')
  await page.getByLabel('Hora de inicio desde').fill('14:30')
  expect(await totalAfter(w, 'turnos', 'hora_inicio[gte]', '14:30')).toBe('1 registro')
  expect(await page.getByRole('row').nth(1).textContent()).toContain('Tarde')

  // A boolean: the users admin module's `activo`.
  const off = await createUser(app, admin, 'consulta', { activo: false })
  await openList(page, 'Usuarios')
  await page.getByLabel('Activo').selectOption({ label: 'No' })
  expect(await totalAfter(w, 'usuarios', 'activo', 'false')).toBe('1 registro')
  expect(await page.getByRole('row').nth(1).getByRole('link').textContent()).toBe(off.id)
  await checkScreen(page, 'filtro-si-no')
  await expectClean(w)
  await page.context().close()
})

it('gives every role of modules.yaml the modules it may see, each list and a record with no axe-core violation', async () => {
  // A record in every module, one of them the agente's own (its personal_id is the assigned staff member).
  await created('denuncias', { ...DENUNCIA, agente_asignado: staff })
  await created('sanciones', { tipo: 'trafico', infractor_nombre: 'Luis Gil', fecha_infraccion: '2026-06-02 09:00:00', lugar_infraccion: 'Calle Mayor 1', importe: 200, agente_denunciante: staff })
  await created('atestados', { tipo: 'penal', juzgado: 'Juzgado n.º 1' })
  await created('vehiculos', { matricula: '3333-DDD', tipo: 'furgon', asignado_a: staff })
  await created('sala092', { tipo_incidencia: 'normal', descripcion: 'Ruido en un bar', ubicacion: 'Calle Luna 3' })
  await created('turnos', { agente_id: staff, fecha: '2026-06-03', tipo_turno: 'mañana', servicio: 'patrulla' })
  await created('equipamiento', { tipo: 'radio', nombre: 'Radio 12', asignado_a: staff })
  const roles = parseRegistry(readFileSync('modules.yaml', 'utf8'), 'modules.yaml').roles.map((r) => r.name)
  expect(roles.length).toBeGreaterThan(3)
  for (const role of roles) {
    const user = await createUser(app, admin, role, { personal_id: staff })
    const token = await login(app, user.username, PASSWORD)
    const seen = (await call(app, 'GET', '/me/modulos', { token })).body.data as Array<{ etiqueta: string, nombre: string }>
    const w = await signedIn(base, { username: user.username, password: PASSWORD })
    const { page } = w
    expect(await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').allTextContents(), role).toEqual(seen.map((m) => m.etiqueta))
    let opened = 0
    for (const m of seen) {
      await openList(page, m.etiqueta)
      await checkScreen(page, `rol-${role}-${m.nombre}`)
      const first = page.getByRole('row').nth(1).getByRole('rowheader').getByRole('link')
      if (await first.count() === 0) continue
      await first.click()
      await page.getByRole('heading', { name: 'Historial' }).waitFor()
      await checkScreen(page, `rol-${role}-${m.nombre}-registro`)
      opened++
    }
    // Every role sees a record somewhere (the agente its own, assigned to its staff member).
    expect(opened, role).toBeGreaterThan(0)
    await expectClean(w)
    await page.context().close()
  }
}, 600_000)

/**
 * A module appended to modules.yaml, as an administrator would add one (the
 * file's last module is `suscripciones`): labelled with accents, but for
 * `devuelto`, which a person reads by its name (docs/administrator-guide.md "Labels").
 */
const EXTRA = `
  retiradas_grua:
    prefix: GRU
    label: Retiradas de grúa
    description: Vehículos retirados de la vía pública por la grúa municipal
    fields:
      matricula_retirada: { type: string, required: true, max_length: 20, label: Matrícula retirada }
      motivo: { type: string, required: true, enum: [estacionamiento_prohibido, abandono, obstaculo], label: Motivo de la retirada, enum_labels: { estacionamiento_prohibido: Estacionamiento prohibido, abandono: Abandono, obstaculo: Obstáculo } }
      tasa: { type: decimal, format: euros, min: 0, label: Tasa de la grúa, help: Lo que paga el titular al recoger el vehículo }
      fecha_retirada: { type: date, label: Fecha de retirada }
      devuelto: { type: boolean, default: false }
`

it('shows a module appended to modules.yaml after a restart: its list, its generated form, its record', async () => {
  const text = readFileSync('modules.yaml', 'utf8')
  expect(text).toMatch(/\n {2}suscripciones:\n/)
  const again = await h.app({ registry: parseRegistry(text.trimEnd() + '\n' + EXTRA, 'temp.yaml') })
  try {
    const at = await listenApp(again)
    const w = await signedIn(at)
    const { page } = w
    await openList(page, 'Retiradas de grúa')
    expect(await page.getByRole('status').filter({ hasText: /registros?$/ }).textContent()).toBe('0 registros')
    await page.getByRole('link', { name: 'Nuevo' }).click()
    await page.getByLabel('Matrícula retirada').fill('4444-FFF')
    await page.getByLabel('Motivo de la retirada').selectOption({ label: 'Obstáculo' })
    await page.getByLabel('Motivo de la retirada').selectOption({ label: 'Abandono' })
    await page.getByLabel('Tasa de la grúa').fill('35.5')
    expect(await page.locator('#campo-tasa-ayuda').textContent()).toBe('Lo que paga el titular al recoger el vehículo. Importe en euros, con coma decimal (200,50)')
    await page.getByLabel('Fecha de retirada').fill('2026-06-04')
    await page.getByLabel('devuelto', { exact: true }).check()
    await checkScreen(page, 'modulo-nuevo-formulario')
    // The create's answer and, should the record not show, what the page shows instead.
    const saved = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/retiradas_grua')
    await page.getByRole('button', { name: 'Guardar' }).click()
    const answer = await saved
    expect(answer.status(), await answer.text()).toBe(201)
    await page.getByRole('heading', { name: 'Historial' }).waitFor().catch(async (e: Error) => {
      throw new Error(`${e.message}\nLa página muestra: ${await page.locator('body').innerText()}`)
    })
    const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)
    expect(id).toMatch(/^GRU-\d{4}-\d+$/)
    const token = await login(again)
    expect((await call(again, 'GET', `/retiradas_grua/${id}`, { token })).body.data).toMatchObject({ matricula_retirada: '4444-FFF', motivo: 'abandono', tasa: 35.5, fecha_retirada: '2026-06-04', devuelto: true })
    // The record by the labels, the amount in euros, the choice by its label.
    const field = (label: string): string => `.fields div:has(> dt:text-is("${label}")) dd`
    expect(await page.locator(field('Motivo de la retirada')).textContent()).toBe('Abandono')
    expect((await page.locator(field('Tasa de la grúa')).textContent())!.replace(/\u00a0/g, ' ')).toBe('35,50 €')
    expect(await page.locator(field('devuelto')).textContent()).toBe('Sí')
    await openList(page, 'Retiradas de grúa')
    expect(await page.getByRole('status').filter({ hasText: /registros?$/ }).textContent()).toBe('1 registro')
    expect(await page.getByRole('row').nth(1).getByRole('link').textContent()).toBe(id)
    expect(await page.getByRole('row').nth(1).textContent()).toContain('4444-FFF')
    await checkScreen(page, 'modulo-nuevo-lista')
    await expectClean(w)
    await page.context().close()
  } finally {
    await again.close()
  }
})

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

async function uploaded (id: string, name: string, type: string, body: Buffer): Promise<string> {
  const res = await app.inject({ method: 'POST', url: `/denuncias/${id}/archivos/adjuntos?nombre=${name}`, headers: { authorization: `Bearer ${admin}`, 'content-type': type }, payload: body })
  expect(res.statusCode, res.body).toBe(201)
  return res.json().data.archivo.id as string
}

it('removes a file from a record after a confirming dialog, its bytes kept as evidence; a read-only role is offered no Quitar', async () => {
  const id = await created('denuncias', DENUNCIA)
  const photo = await uploaded(id, 'foto.png', 'image/png', PNG)
  const note = await uploaded(id, 'nota.txt', 'text/plain', Buffer.from('Nota de prueba'))
  const w = await signedIn()
  const { page } = w
  await page.evaluate(`location.hash = ${JSON.stringify(`#/denuncias/${id}`)}`)
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  // Cancel keeps the file.
  await page.getByRole('button', { name: 'Quitar foto.png' }).click()
  const dialog = page.getByRole('dialog', { name: 'Quitar foto.png' })
  await dialog.waitFor()
  expect(await dialog.textContent()).toContain('Sus bytes se conservan como prueba')
  await checkScreen(page, 'quitar-archivo-dialogo')
  await page.keyboard.press('Escape')
  await dialog.waitFor({ state: 'hidden' })
  expect((await call(app, 'GET', `/denuncias/${id}`, { token: admin })).body.data.adjuntos).toHaveLength(2)

  await page.getByRole('button', { name: 'Quitar foto.png' }).click()
  await dialog.getByRole('button', { name: 'Quitar' }).click()
  await page.getByText('Quitado: foto.png (sus bytes se conservan como prueba)').waitFor()
  expect(await page.getByRole('button', { name: 'Quitar foto.png' }).count()).toBe(0)
  await page.getByRole('button', { name: 'Quitar nota.txt' }).waitFor()
  const stored = (await call(app, 'GET', `/denuncias/${id}`, { token: admin })).body.data
  expect(stored.adjuntos.map((f: { id: string }) => f.id)).toEqual([note])
  expect(stored._version).toBe(4)
  // The bytes stay: who may delete in the module still downloads the removed file by its id.
  const kept = await app.inject({ method: 'GET', url: `/denuncias/${id}/archivos/adjuntos/${photo}`, headers: { authorization: `Bearer ${admin}` } })
  expect(kept.statusCode).toBe(200)
  expect(kept.rawPayload.equals(PNG)).toBe(true)
  await checkScreen(page, 'quitar-archivo-hecho')
  await expectClean(w)
  await page.context().close()

  const consulta = await createUser(app, admin, 'consulta')
  const r = await signedIn(base, { username: consulta.username, password: PASSWORD })
  await r.page.evaluate(`location.hash = ${JSON.stringify(`#/denuncias/${id}`)}`)
  await r.page.getByRole('button', { name: 'Custodia de nota.txt' }).waitFor()
  expect(await r.page.getByRole('button', { name: /^Quitar/ }).count()).toBe(0)
  await expectClean(r)
  await r.page.context().close()
})
