/**
 * `npm run check [file]`: validates modules.yaml (or MODULES_FILE, or the
 * file given) without starting the server or touching a database.
 */
import { resolve } from 'node:path'
import { ConfigError } from '../core/errors.js'
import { loadRegistry } from '../core/registry/load.js'

const file = resolve(process.argv[2] ?? process.env.MODULES_FILE ?? 'modules.yaml')
try {
  const registry = loadRegistry(file)
  const fields = registry.modules.reduce((n, m) => n + m.fields.length, 0)
  process.stdout.write(`${file}: OK — ${registry.modules.length} modules, ${fields} fields, ${registry.roles.length} roles\n`)
  for (const m of registry.modules) {
    process.stdout.write(`  /${m.path.padEnd(14)} ${m.prefix.padEnd(4)} ${String(m.fields.length).padStart(2)} fields${m.stateField === undefined ? '' : `, state ${m.stateField}`}\n`)
  }
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`)
  process.exit(1)
}
