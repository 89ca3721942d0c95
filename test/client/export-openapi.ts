/**
 * Writes the service's OpenAPI document to a file (argument; default
 * test/client/generated/openapi.json), as GET /docs/json serves it from an
 * app built with the repository's modules.yaml on a throw-away embedded
 * database. Used by `npm run openapi:client` and `npm run openapi:lint`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../core/config.js'

const out = resolve(process.argv[2] ?? 'test/client/generated/openapi.json')
const dataDir = mkdtempSync(join(tmpdir(), 'policia-openapi-'))
try {
  // The embedded database and development secrets, whatever the shell has set.
  const config = loadConfig({ DATA_DIR: dataDir, TZ: process.env.TZ ?? 'Europe/Madrid', LOG_LEVEL: 'silent', METRICS_PORT: '0', ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'export-openapi-0123' })
  const app = await buildApp({ config, logger: false })
  try {
    const res = await app.inject({ method: 'GET', url: '/docs/json' })
    if (res.statusCode !== 200) throw new Error(`GET /docs/json answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, `${JSON.stringify(res.json(), null, 2)}\n`)
    console.log(`OpenAPI document written to ${out}`)
  } finally {
    await app.close()
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
