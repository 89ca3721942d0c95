/**
 * A client generated from the document works (docs/user-guide.md "API
 * explorer and OpenAPI document"): the SDK @hey-api/openapi-ts makes
 * (`npm run openapi:sdk`, which also type-checks test/client/sdk-check.ts
 * under `tsc --strict`) runs that program against a listening service
 * through Stoplight Prism (`prism proxy --errors`): every request the SDK
 * builds and every answer must be what the document describes, and the
 * program must get what it asked for. `npm run test:contract`.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ADMIN, createHarness, type Harness } from '../helpers/app.js'
import { call } from '../helpers/http.js'
import { listenApp } from '../helpers/free-port.js'
import { startPrism, type Proxy } from './prism.js'

/** test/client/sdk-check.ts's `sdkTour`, as far as this test reads it. */
type SdkTour = (options: { baseUrl: string, username: string, password: string, fetch?: typeof fetch }) => Promise<{
  witnesses: string[], foundByGroups: boolean, version: number, file: unknown, versions: number[], partial: Record<string, unknown>
}>

let h: Harness
let prism: Proxy
let dir: string

beforeAll(async () => {
  // The SDK from this checkout's document, and the program compiled against it.
  execFileSync('npm', ['run', '--silent', 'openapi:sdk'], { cwd: new URL('../..', import.meta.url).pathname, stdio: 'pipe' })
  h = await createHarness()
  const app = await h.app()
  const upstream = await listenApp(app)
  dir = mkdtempSync(join(tmpdir(), 'policia-sdk-'))
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify((await call(app, 'GET', '/docs/json')).body))
  prism = await startPrism(join(dir, 'openapi.json'), upstream)
}, 400_000)

afterAll(async () => {
  await prism?.stop()
  await h?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

it('the generated SDK logs in, creates with witnesses, lists with any-of groups, updates with If-Match, uploads and reads the history, all as the document says', async () => {
  // Imported by a path tsc does not follow: the program is compiled against the generated SDK by its own tsconfig (test/client/tsconfig.sdk.json).
  const program = '../client/sdk-check.js'
  const { sdkTour } = await import(program) as { sdkTour: SdkTour }
  const violations: string[] = []
  const watched: typeof fetch = async (input, init) => {
    const res = await fetch(input, init)
    const found = res.headers.get('sl-violations')
    if (found !== null) violations.push(`${init?.method ?? (input as Request).method} ${String((input as Request).url ?? input)}: ${found}`)
    return res
  }
  const result = await sdkTour({ baseUrl: prism.base, username: ADMIN.username, password: ADMIN.password, fetch: watched })
  expect(violations, prism.log().slice(-3000)).toEqual([])
  expect(result.witnesses).toEqual(['Luis Pérez', 'Marta Ruiz'])
  expect(result.foundByGroups).toBe(true)
  expect(result.version).toBe(2)
  const bytes = Buffer.from('Acta de la inspección ocular')
  expect(result.file).toEqual({ nombre: 'acta inspección.txt', bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') })
  // Created, updated, a file added.
  expect(result.versions).toEqual([1, 2, 3])
  expect(Object.keys(result.partial).sort()).toEqual(['_id', 'agente_asignado', 'estado'])
}, 300_000)
