/**
 * `npm run bench:import`: a CSV of BENCH_IMPORT_ROWS (default 10,000)
 * denuncias imported through the full HTTP stack of a real listening
 * server (docs/user-guide.md "Import (importar)") with every guarantee on:
 * each row validated like a POST, ids in file order, each record's history
 * entry and seal, one transaction. First as `simular=true` (validation and
 * checks only), then for real; the seals of a sample are verified after.
 * Embedded by default, PostgreSQL and Redis when DATABASE_URL / REDIS_URL
 * are set (use a throw-away database). Not part of `npm test`.
 *
 *   [BENCH_IMPORT_ROWS=10000] DATABASE_URL=postgres://…/bench REDIS_URL=redis://… npm run bench:import
 */
import { dniLetter } from '../../core/field-types/dni.js'
import { BENCH_ADMIN, startBenchServer } from './bench-app.js'

const rows = Number(process.env.BENCH_IMPORT_ROWS ?? 10_000)
const server = await startBenchServer()
const { base, json } = server

try {
  const token = (await json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
  const n = Date.now() % 100_000_000
  const agente = (await json('POST', '/personal', { tip: `TIP-BENCH-${n}`, nif: `${String(n).padStart(8, '0')}${dniLetter(n)}`, nombre: 'Ana', apellidos: 'Ruiz', escala: 'oficial' }, token)).data._id as string
  const lines = ['\uFEFFdenunciante_nombre;denunciante_dni;tipo;fecha_hechos;lugar_hechos;descripcion;testigos;agente_asignado;prioridad']
  const tipos = ['hurto', 'robo', 'daños', 'lesiones', 'estafa']
  for (let i = 1; i <= rows; i++) {
    lines.push([`Denunciante ${i}`, i % 10 === 0 ? '12345678Z' : '', tipos[i % 5], `2026-0${1 + i % 9}-1${i % 10} 10:${String(i % 60).padStart(2, '0')}:00`,
      `"Calle Mayor; ${i}"`, `"Sustracción de un objeto; expediente ""${i}"""`, i % 3 === 0 ? `"[{""nombre"":""Testigo ${i}"",""dni"":""12345678Z"",""declaracion"":""Vio los hechos""}]"` : '', i % 2 === 0 ? agente : '', 'alta'].join(';'))
  }
  const csv = lines.join('\r\n') + '\r\n'
  const send = async (query: string): Promise<{ status: number, body: any, seconds: number }> => {
    const t0 = performance.now()
    const res = await fetch(`${base}/denuncias/importar${query}`, { method: 'POST', headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` }, body: csv })
    const body = await res.json() as unknown
    return { status: res.status, body, seconds: (performance.now() - t0) / 1000 }
  }
  const mode = `${process.env.DATABASE_URL !== undefined ? 'PostgreSQL' : 'embedded'}${process.env.REDIS_URL !== undefined ? ' + Redis' : ''}`
  console.log(`import of ${rows} denuncias (${(Buffer.byteLength(csv) / 1024 / 1024).toFixed(1)} MiB CSV), ${mode}`)
  const dry = await send('?simular=true')
  if (dry.status !== 200 || dry.body.data.validas !== rows) throw new Error(`simular: ${dry.status} ${JSON.stringify(dry.body).slice(0, 500)}`)
  console.log(`  simular=true (validate and check every row, write nothing): ${dry.seconds.toFixed(2)} s`)
  const real = await send('')
  if (real.status !== 201 || real.body.data.creados !== rows) throw new Error(`import: ${real.status} ${JSON.stringify(real.body).slice(0, 500)}`)
  console.log(`  import (one transaction, ${rows} records with history and seal): ${real.seconds.toFixed(2)} s — ${Math.round(rows / real.seconds)} rows/s (target: under 20 s)`)
  const ids = real.body.data.ids as string[]
  for (const id of [ids[0]!, ids[Math.floor(ids.length / 2)]!, ids.at(-1)!]) {
    const verdict = await json('GET', `/denuncias/${id}/verificar`, undefined, token)
    if (verdict.data.valido !== true) throw new Error(`${id} does not verify`)
  }
  console.log('  seals of the first, middle and last record verify')
} finally {
  await server.stop()
}
