/**
 * A record's `Accesos` in the console (docs/user-guide.md "Console",
 * "Personal data"), in Debian's Chromium: the data-protection officer sees
 * who read the record's encrypted data and who printed it, by name, newest
 * first, from the read log; a role that may not read the log sees no such
 * section; the screen stays free of axe-core violations.
 */
import { expect, it } from 'vitest'
import { PASSWORD } from '../helpers/app.js'
import { call } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { checkScreen, createRecord, expectClean, signIn, useConsoleServer, watchedPage } from './console-page.js'

const server = useConsoleServer()

it('shows the officer who read and printed a record; a role without the read log sees no Accesos', async () => {
  const { app, base, browser, admin } = server()
  const id = await createRecord(server(), 'denuncias', {
    denunciante_nombre: 'Begoña Núñez Peña', denunciante_dni: '12345678Z', tipo: 'robo', fecha_hechos: '2026-06-01 10:30:00',
    lugar_hechos: 'Plaza de España', descripcion: 'Sustracción de una bicicleta',
  })
  const jefe = await newUser(app, admin, 'jefe', { nombre: 'Inés Ibáñez' })
  expect((await call(app, 'GET', `/denuncias/${id}`, { token: jefe.token })).status).toBe(200)
  expect((await call(app, 'GET', `/denuncias/${id}/documento`, { token: jefe.token })).status).toBe(200)
  const dpo = await newUser(app, admin, 'delegado_proteccion_datos', { nombre: 'Dolores Ruiz' })

  const w = await watchedPage(browser, base)
  const { page } = w
  await page.goto(`${base}/consola`)
  await signIn(page, dpo.username, PASSWORD)
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  await page.goto(`${base}/consola#/denuncias/${encodeURIComponent(id)}`)
  const accesses = page.getByRole('region', { name: 'Accesos' })
  await accesses.getByRole('table').waitFor()
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  // The caption and the rows of one drawing: the officer's own reads may still land and redraw the table.
  const drawn = await accesses.getByRole('table').evaluate((t) => ({ caption: t.querySelector('caption')?.textContent, rows: [...t.querySelectorAll('tbody tr')].map((r) => r.textContent ?? '') }))
  const rows = drawn.rows.map((r) => r.replace(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}/, '<fecha>'))
  // The officer's own reads of this screen are there too (it decrypts the record to show it), newest, as they land.
  expect(rows.filter((r) => !r.includes('Dolores Ruiz'))).toEqual([
    '<fecha>Inés IbáñezCopia impresaDNI del denunciante',
    '<fecha>Inés IbáñezLectura de datos cifradosDNI del denunciante',
    '<fecha>AdministradorLectura de datos cifradosDNI del denunciante',
  ])
  expect(drawn.caption).toBe(`${rows.length} accesos, el más reciente primero`)
  await checkScreen(page, 'registro-accesos')
  await expectClean(w)
  await page.context().close()

  const other = await watchedPage(browser, base)
  await other.page.goto(`${base}/consola`)
  await signIn(other.page, jefe.username, PASSWORD)
  await other.page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  await other.page.goto(`${base}/consola#/denuncias/${encodeURIComponent(id)}`)
  await other.page.getByRole('heading', { name: 'Historial' }).waitFor()
  expect(await other.page.getByRole('heading', { name: 'Accesos' }).count()).toBe(0)
  await expectClean(other)
  await other.page.context().close()
})
