/**
 * `Protección de datos` in the console (docs/user-guide.md "Console",
 * "Personal data"), in Debian's Chromium: the data-protection officer runs
 * the retention review and sees closed denuncias five years after their
 * facts; prolongs one (it leaves the list), blocks one (marked blocked;
 * gone for a jefe; a notice on its screen), erases one after confirming
 * (its personal data null for the superadmin); finds a DNI's records and
 * downloads them as a PDF; sees the decisions. A jefe sees no such entry.
 * The screen stays free of axe-core violations, a dialog open or not.
 */
import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { PASSWORD } from '../helpers/app.js'
import { call } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { checkScreen, createRecord, expectClean, signIn, useConsoleServer, watchedPage } from './console-page.js'

const server = useConsoleServer()
const DNI = '11111111H'

/** A denuncia whose facts are in 2019, archived: due for review since 2024. */
async function closedDenuncia (nombre: string): Promise<string> {
  const { app, admin } = server()
  const id = await createRecord(server(), 'denuncias', {
    denunciante_nombre: nombre, denunciante_dni: DNI, tipo: 'hurto', fecha_hechos: '2019-05-01 10:30:00',
    lugar_hechos: 'Plaza Mayor', descripcion: 'Sustracción de una cartera',
  })
  const res = await call(app, 'PUT', `/denuncias/${id}`, { token: admin, body: { estado: 'archivada' } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return id
}

it('lets the officer review, prolong, block and erase records, find a DNI\'s records and read the decisions; a jefe sees no entry', async () => {
  const { app, base, browser, admin } = server()
  const prolonged = await closedDenuncia('Begoña Núñez Peña')
  const blocked = await closedDenuncia('Íñigo Ortúzar Ruiz')
  const erased = await closedDenuncia('Zoe Martínez Gil')
  const jefe = await newUser(app, admin, 'jefe', { nombre: 'Inés Ibáñez' })
  const dpo = await newUser(app, admin, 'delegado_proteccion_datos', { nombre: 'Dolores Ruiz' })

  const w = await watchedPage(browser, base)
  const { page } = w
  await page.goto(`${base}/consola`)
  await signIn(page, dpo.username, PASSWORD)
  await page.getByRole('navigation', { name: 'Herramientas' }).getByRole('link', { name: 'Protección de datos' }).click()
  await page.getByRole('heading', { level: 1, name: 'Protección de datos' }).waitFor()
  const review = page.getByRole('region', { name: 'Revisión de conservación' })
  const status = review.getByRole('status')
  const row = (id: string) => review.locator('tbody tr', { hasText: id })

  await review.getByRole('button', { name: 'Revisar ahora' }).click()
  await status.filter({ hasText: 'Revisión hecha' }).waitFor()
  expect(await status.textContent()).toMatch(/^Revisión hecha \(\d{2}\/\d{2}\/\d{4}\): 3 registros pendientes de revisar$/)
  await row(erased).waitFor()
  expect(await row(prolonged).locator('td').allTextContents()).toEqual(['Denuncias', '01/05/2019', '01/05/2024', 'Archivada', 'No', 'No', expect.stringContaining('Prolongar')])
  await review.getByText(/^Última revisión: la del \d{2}\/\d{2}\/\d{4}, hecha el .*, que encontró 3 registros pendientes de revisar\./).waitFor()
  await checkScreen(page, 'proteccion-datos-revision')

  // Prolong: a date not after today is the API's refusal, shown in the dialog; a later one takes the record off the list.
  await row(prolonged).getByRole('button', { name: 'Prolongar' }).click()
  const prolong = page.getByRole('dialog', { name: `Prolongar la conservación de ${prolonged}` })
  await prolong.getByLabel('Motivo').fill('Causa penal abierta')
  await prolong.getByLabel('Conservar hasta').fill('31/02/2099')
  await prolong.getByRole('button', { name: 'Prolongar', exact: true }).click()
  await prolong.getByRole('alert').filter({ hasText: 'Revise los campos marcados' }).waitFor()
  expect(await prolong.getByText('La fecha debe ser una fecha válida dd/mm/aaaa').count()).toBe(1)
  await prolong.getByLabel('Conservar hasta').fill('01/01/2020')
  await prolong.getByRole('button', { name: 'Prolongar', exact: true }).click()
  await prolong.getByRole('alert').filter({ hasText: 'Datos inválidos' }).waitFor()
  await prolong.getByLabel('Conservar hasta').fill('01/01/2099')
  await prolong.getByRole('button', { name: 'Prolongar', exact: true }).click()
  await status.filter({ hasText: 'prolongada' }).waitFor()
  expect(await status.textContent()).toBe(`Conservación de ${prolonged} prolongada hasta el 01/01/2099: sale de la revisión hasta entonces`)
  await expect.poll(() => row(prolonged).count()).toBe(0)

  // Block: the row says since when, and a jefe no longer finds the record.
  await row(blocked).getByRole('button', { name: 'Bloquear' }).click()
  const block = page.getByRole('dialog', { name: `Bloquear ${blocked}` })
  await block.getByLabel('Motivo').fill('Conservación vencida; pendiente de supresión')
  await block.getByRole('button', { name: 'Bloquear', exact: true }).click()
  await status.filter({ hasText: `Registro ${blocked} bloqueado` }).waitFor()
  await row(blocked).getByRole('button', { name: 'Desbloquear' }).waitFor()
  expect(await row(blocked).locator('td').nth(5).textContent()).toMatch(/^Desde \d{2}\/\d{2}\/\d{4} \d{2}:\d{2}$/)
  expect((await call(app, 'GET', `/denuncias/${blocked}`, { token: jefe.token })).status).toBe(404)

  // Erase: nothing is sent until the officer confirms it is for good.
  await row(erased).getByRole('button', { name: 'Suprimir' }).click()
  const erase = page.getByRole('dialog', { name: `Suprimir los datos personales de ${erased}` })
  // waitFor is strict: it fails if the warning is drawn twice, and waits while the dialog opens.
  await erase.getByText(/para siempre .* No se podrán recuperar\./).waitFor()
  await erase.getByLabel('Motivo').fill('Plazo de conservación cumplido')
  await erase.getByRole('button', { name: 'Suprimir definitivamente' }).click()
  await erase.getByText('Marque la casilla para confirmar que la supresión es definitiva').waitFor()
  expect((await call(app, 'GET', `/denuncias/${erased}`, { token: admin })).body.data.denunciante_nombre).toBe('Zoe Martínez Gil')
  await checkScreen(page, 'proteccion-datos-suprimir')
  await erase.getByRole('checkbox', { name: /Entiendo que los datos personales/ }).check()
  await erase.getByRole('button', { name: 'Suprimir definitivamente' }).click()
  await status.filter({ hasText: `Datos personales de ${erased} suprimidos` }).waitFor()
  await expect.poll(() => row(erased).count()).toBe(0)
  const after = (await call(app, 'GET', `/denuncias/${erased}`, { token: admin })).body.data
  expect([after.denunciante_nombre, after.denunciante_dni, after.tipo]).toEqual([null, null, 'hurto'])

  // People by name come from the directory a moment after the rows.
  const decisions = page.getByRole('region', { name: 'Decisiones' })
  const taken = async (): Promise<string[]> => (await decisions.locator('tbody tr').allTextContents()).map((r) => r.replace(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}/, '<fecha>'))
  await expect.poll(taken).toEqual([
    `<fecha>Dolores RuizDenuncias${erased}Supresión de datos personalesPlazo de conservación cumplido—`,
    `<fecha>Dolores RuizDenuncias${blocked}BloqueoConservación vencida; pendiente de supresión—`,
    `<fecha>Dolores RuizDenuncias${prolonged}PrórrogaCausa penal abierta01/01/2099`,
  ])

  // A person's data: the two records that still hold the DNI, then the same as a PDF.
  const person = page.getByRole('region', { name: 'Datos de un interesado' })
  await person.getByLabel('DNI o NIE').fill('1234')
  await person.getByRole('button', { name: 'Buscar' }).click()
  await person.getByRole('alert').filter({ hasText: 'Datos inválidos' }).waitFor()
  await person.getByLabel('DNI o NIE').fill(DNI.toLowerCase())
  await person.getByRole('button', { name: 'Buscar' }).click()
  await person.getByRole('status').filter({ hasText: '2 registros guardan este DNI' }).waitFor()
  const held = async (): Promise<string[][]> => (await person.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent ?? '')))).sort((a, b) => a[1]!.localeCompare(b[1]!))
  await expect.poll(held).toEqual([prolonged, blocked].sort().map((id) => [
    'Denuncias', id, 'DNI del denunciante', 'No', expect.stringMatching(/^[1-9]\d*$/), expect.stringMatching(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}, Administrador: Lectura de datos cifrados/),
  ]))
  await checkScreen(page, 'proteccion-datos-interesado')
  const [saved] = await Promise.all([page.waitForEvent('download'), person.getByRole('button', { name: 'Descargar PDF' }).click()])
  expect(saved.suggestedFilename()).toMatch(/^interesado-\d{4}-\d{2}-\d{2}\.pdf$/)
  expect(readFileSync(await saved.path()).subarray(0, 5).toString()).toBe('%PDF-')
  await person.getByRole('status').filter({ hasText: `Informe descargado: ${saved.suggestedFilename()}` }).waitFor()

  // The blocked record's own screen says so.
  await row(blocked).getByRole('link', { name: blocked }).click()
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  expect(await page.locator('.blocked-notice').textContent()).toMatch(/^Registro bloqueado desde el \d{2}\/\d{2}\/\d{4} \d{2}:\d{2}: solo lo leen el delegado de protección de datos y el superadministrador, y cada lectura queda registrada\.$/)
  await expectClean(w)
  await page.context().close()

  const other = await watchedPage(browser, base)
  await other.page.goto(`${base}/consola`)
  await signIn(other.page, jefe.username, PASSWORD)
  const tools = other.page.getByRole('navigation', { name: 'Herramientas' })
  await tools.getByRole('link').first().waitFor()
  expect(await tools.getByRole('link', { name: 'Protección de datos' }).count()).toBe(0)
  await other.page.goto(`${base}/consola#/_proteccion_datos`)
  await other.page.getByRole('heading', { name: 'Módulo no disponible' }).waitFor()
  await expectClean(other)
  await other.page.context().close()
})
