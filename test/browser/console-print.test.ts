/**
 * `Imprimir` on a record's screen (docs/user-guide.md "Printed records
 * (documento)") in Debian's Chromium: the printed copy downloads under its
 * name, fetched with the token in the header, never in an address; it is
 * the record's PDF, its code valid; the screen stays free of axe-core
 * violations. Its first page, rendered, is kept for the user guide
 * (test/artifacts/documento-denuncia.png → docs/screenshots/).
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { expect, it } from 'vitest'
import { ADMIN } from '../helpers/app.js'
import { call } from '../helpers/http.js'
import { pdfPage, pdfQr, pdfText } from '../helpers/pdf.js'
import { checkScreen, createRecord, expectClean, signIn, useConsoleServer, watchedPage } from './console-page.js'

const server = useConsoleServer({ env: { FORCE_NAME: 'Policía Local de Villanueva de la Cañada' } })
const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname

it('downloads a record\'s printed copy from Imprimir: its PDF, its code valid, the token in no address', async () => {
  const { app, base, browser } = server()
  const id = await createRecord(server(), 'denuncias', {
    denunciante_nombre: 'Begoña Núñez Peña', denunciante_dni: '12345678Z', tipo: 'robo', fecha_hechos: '2026-06-01 10:30:00',
    lugar_hechos: 'Plaza de España', descripcion: 'Sustracción de una bicicleta amarrada a una farola de la plaza.',
    testigos: [{ nombre: 'Íñigo Ortúzar', declaracion: 'Vio a dos personas cortar el candado y alejarse hacia la calle Mayor.' }],
    prioridad: 'alta', observaciones: 'Nota interna del instructor.',
  })
  const w = await watchedPage(browser, base)
  const { page } = w
  await page.goto(`${base}/consola`)
  await signIn(page, ADMIN.username, ADMIN.password)
  await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
  await page.goto(`${base}/consola#/denuncias/${encodeURIComponent(id)}`)
  await page.getByRole('heading', { name: 'Historial' }).waitFor()
  const [saved] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Imprimir' }).click()])
  expect(saved.suggestedFilename()).toBe(`${id}-v1.pdf`)
  await page.getByRole('status').filter({ hasText: 'Copia impresa descargada' }).waitFor()
  expect(await page.getByRole('status').filter({ hasText: 'Copia impresa descargada' }).textContent()).toBe(`Copia impresa descargada: ${id}-v1.pdf`)
  const pdf = readFileSync(await saved.path())
  const text = pdfText(pdf).replace(/\s+/g, ' ')
  for (const expected of ['Policía Local de Villanueva de la Cañada', `Registro ${id} · versión 1`, 'Nombre del denunciante Begoña Núñez Peña', 'Prioridad Alta', 'Testigos • Nombre: Íñigo Ortúzar']) expect(text).toContain(expected)
  expect(text).not.toContain('Nota interna')
  const verdict = await call(app, 'POST', '/documentos/verificar', { body: { codigo: pdfQr(pdf) } })
  expect(verdict.body.data).toEqual({ valido: true, id, version: 1, hay_version_posterior: false })
  expect(w.urls.some((u) => u.endsWith(`/denuncias/${encodeURIComponent(id)}/documento`))).toBe(true)
  await checkScreen(page, 'registro-imprimir')
  await expectClean(w)
  mkdirSync(ARTIFACTS, { recursive: true })
  writeFileSync(`${ARTIFACTS}documento-denuncia.png`, pdfPage(pdf, 1, 70))
  await page.context().close()
})
