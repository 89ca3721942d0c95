/**
 * `npm run bench:console`: the console's two S19 budgets (docs/performance.md
 * "The console"), against a real listening server:
 *
 * - the first screen's JavaScript and CSS as the service sends them
 *   compressed (gzip, the encoding plugins/console.ts serves; brotli shown
 *   beside for reference), budget 300 KB;
 * - the render time of a 50-row list page after its data arrives, budget
 *   200 ms: in Debian's Chromium (playwright-core), the marks the console
 *   sets (console/src/perf.ts) from the list's JSON parsed to the end of
 *   the frame that paints the table, BENCH_RUNS page changes.
 *
 *   [BENCH_RUNS=40] [CHROMIUM_PATH=/usr/bin/chromium] npm run bench:console
 */
import { request as httpRequest } from 'node:http'
import { brotliCompressSync, constants } from 'node:zlib'
import { chromium } from 'playwright-core'
import { ensureConsoleBuilt } from '../../console/build.js'
import { BENCH_ADMIN, median, p95, startBenchServer } from './bench-app.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 40)
const ROWS = 120
const KB = 1000

/** The raw (still compressed) body of a GET, as a browser receives it. */
function raw (url: string, encoding: string): Promise<{ bytes: Buffer, encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers: { 'accept-encoding': encoding } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ bytes: Buffer.concat(chunks), encoding: res.headers['content-encoding'] }))
    }).on('error', reject).end()
  })
}

await ensureConsoleBuilt()
const server = await startBenchServer()
const { base } = server
try {
  // 1. The first screen: the page and every script and style sheet it loads (all of them: the bundle is not split).
  const html = (await raw(`${base}/consola/`, 'identity')).bytes.toString('utf8')
  const assets = [...html.matchAll(/(?:src|href)="(\/consola\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!)
  let gzip = 0
  let plain = 0
  let brotli = 0
  const sizes: string[] = []
  for (const path of assets) {
    const served = await raw(base + path, 'gzip')
    const body = (await raw(base + path, 'identity')).bytes
    if (served.encoding !== 'gzip') throw new Error(`${path} not served with gzip`)
    const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length
    gzip += served.bytes.length
    plain += body.length
    brotli += br
    sizes.push(`| \`${path.replace(/^\/consola\//, '')}\` | ${(body.length / KB).toFixed(1)} | ${(served.bytes.length / KB).toFixed(1)} | ${(br / KB).toFixed(1)} |`)
  }

  // 2. A 50-row page rendered after its data arrives.
  const token = (await server.json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
  for (let i = 1; i <= ROWS; i++) {
    const res = await server.json('POST', '/denuncias', { denunciante_nombre: `Persona ${i}`, denunciante_dni: '12345678Z', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: `Calle ${i}`, descripcion: `Hechos número ${i}` }, token)
    if (res.success !== true) throw new Error(JSON.stringify(res))
  }
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] })
  const durations: number[] = []
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
    await page.goto(`${base}/consola`)
    await page.getByLabel('Usuario').fill(BENCH_ADMIN.username)
    await page.getByLabel('Contraseña').fill(BENCH_ADMIN.password)
    await page.getByRole('button', { name: 'Entrar' }).click()
    await page.getByRole('navigation', { name: 'Módulos' }).getByRole('link').first().waitFor()
    for (let i = 0; i <= RUNS; i++) {
      const before = await page.evaluate(() => performance.getEntriesByName('consola:lista-render').length)
      // Pages 1 and 2 in turn (50 rows each), sorted alternately: each a new request and a new table.
      await page.evaluate(`location.hash = '#/denuncias?pagina=${1 + (i % 2)}&sort=${i % 4 < 2 ? '_id' : '-_id'}'`)
      await page.waitForFunction((b) => performance.getEntriesByName('consola:lista-render').length > b, before)
      const rows = await page.locator('tbody tr').count()
      if (rows !== 50) throw new Error(`page ${i}: ${rows} rows`)
      const last = await page.evaluate(() => performance.getEntriesByName('consola:lista-render').at(-1)!.duration)
      // The first is a warm-up (the module's first list screen).
      if (i > 0) durations.push(last)
    }
  } finally {
    await browser.close()
  }

  console.log(`\nFirst screen (/consola/): ${assets.length} files of JavaScript and CSS\n`)
  console.log('| file | plain KB | gzip KB (as served) | brotli KB |\n|---|---|---|---|')
  console.log(sizes.join('\n'))
  console.log(`| **total** | ${(plain / KB).toFixed(1)} | **${(gzip / KB).toFixed(1)}** (budget 300) | ${(brotli / KB).toFixed(1)} |`)
  console.log(`\nA 50-row list page, data arrived to the frame painted, ${durations.length} page changes in Chromium (${server.app.databaseKind}):`)
  console.log(`median ${median(durations).toFixed(1)} ms, p95 ${p95(durations).toFixed(1)} ms, max ${Math.max(...durations).toFixed(1)} ms (budget 200)`)
  if (gzip > 300 * KB || p95(durations) > 200) process.exitCode = 1
} finally {
  await server.stop()
}
