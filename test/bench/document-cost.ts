/**
 * What printing costs (docs/performance.md "Printed records"): the CPU of
 * one `GET /atestados/{id}/documento` of a three-page atestado, printed
 * one at a time on a bench server in this process, measured around each
 * request. The figure includes the client's fetch of the PDF, so the
 * server's own share is below it.
 */
import type { BenchServer } from './bench-app.js'

/** Enough diligencias, of a few lines each, for three A4 pages. */
const DILIGENCIAS = Array.from({ length: 34 }, (_, i) => `Diligencia ${i + 1}. Se hace constar que el agente instructor, con número de identificación profesional 1234, ` +
  'se persona en el lugar de los hechos, donde observa los daños descritos por el denunciante y toma fotografías que se adjuntan.')

export async function documentCost (server: BenchServer, token: string, rounds = 40): Promise<{ pages: number, bytes: number, medianMs: number, meanMs: number }> {
  const created = await server.json('POST', '/atestados', { tipo: 'penal', juzgado: 'Juzgado de Instrucción n.º 3', fecha_remision: '2026-06-04', imputados: ['Persona investigada'], victimas: ['Begoña Núñez Peña'], diligencias: DILIGENCIAS }, token)
  const url = `${server.base}/atestados/${created.data._id as string}/documento`
  const print = async (): Promise<Buffer> => Buffer.from(await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer())
  for (let i = 0; i < 5; i++) await print()
  const costs: number[] = []
  let pdf: Buffer = Buffer.alloc(0)
  for (let i = 0; i < rounds; i++) {
    const before = process.cpuUsage()
    pdf = await print()
    const used = process.cpuUsage(before)
    costs.push((used.user + used.system) / 1000)
  }
  costs.sort((a, b) => a - b)
  const pages = Number(/\/Type \/Pages\s*\/Count (\d+)/.exec(pdf.toString('latin1'))?.[1] ?? /\/Count (\d+)/.exec(pdf.toString('latin1'))?.[1] ?? 0)
  return { pages, bytes: pdf.length, medianMs: costs[Math.floor(costs.length / 2)]!, meanMs: costs.reduce((a, b) => a + b, 0) / costs.length }
}

export function documentLine (r: Awaited<ReturnType<typeof documentCost>>): string {
  return `Printing a ${r.pages}-page atestado (GET /atestados/{id}/documento, one at a time, ${Math.round(r.bytes / 1024)} KiB): ` +
    `${r.medianMs.toFixed(0)} ms CPU per copy (median; mean ${r.meanMs.toFixed(0)} ms), the client's fetch included\n`
}
