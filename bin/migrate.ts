/**
 * `npm run migrate`: brings the database schema in line with modules.yaml,
 * as the start does (additive changes applied under the advisory lock;
 * destructive ones refused), then exits. For a deployment step that runs
 * once before the instances (deploy/k8s/migrate-job.yaml); the instances
 * then find nothing left to do.
 */
import { parseArgs } from 'node:util'
import pino from 'pino'
import { loadConfig } from '../core/config.js'
import { ConfigError } from '../core/errors.js'
import { loadRegistry } from '../core/registry/load.js'
import { openDatabase } from '../db/open.js'
import { syncSchema } from '../db/schema-sync.js'
import { createFieldCipher } from '../core/crypto.js'
import { loadSystemKeys } from '../db/system-keys.js'
import { upgradeBlindIndexes } from '../records/blind-index-upgrade.js'

const HELP = `npm run migrate [-- --help]  (in the image: node dist/bin/migrate.js)

Brings the database schema in line with modules.yaml exactly as the start
does (additive changes only, under the same advisory lock as the
instances), rebuilds blind indexes still under the old single index key
(once, in one transaction, with progress; README "Encryption"), then exits. Needs DATABASE_URL; waits for PostgreSQL with
back-off like the start (STARTUP_WAIT).
Exit status: 0 schema in line (the statements applied are listed);
1 refused (a change would drop or rewrite data: the message lists the
statements) or failed.
`

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help === true) { process.stdout.write(HELP); return }
  const config = loadConfig()
  if (config.databaseUrl === undefined) throw new ConfigError('npm run migrate needs DATABASE_URL (the embedded database is brought in line by npm start itself)')
  const registry = loadRegistry(config.modulesFile)
  const log = pino({ level: 'warn' }, pino.destination(2))
  const db = await openDatabase(config, registry, log, { waitMs: config.startupWaitMs })
  try {
    process.stdout.write(`Comparing the database schema with ${config.modulesFile}…\n`)
    const applied = await syncSchema(db.orm, config.modulesFile, true)
    for (const s of applied) process.stdout.write(`  ${s};\n`)
    process.stdout.write(applied.length === 0 ? 'The schema was already in line; nothing to apply.\n' : `${applied.length} statements applied.\n`)
    // Blind indexes of before one key per field: rebuilt once, in one transaction (README "Encryption").
    const keys = await loadSystemKeys(db.orm.em.fork(), config.encryptionKeys)
    const cipher = createFieldCipher(config.encryptionKeys, keys)
    const report = await upgradeBlindIndexes(db.orm.em, registry, cipher, config.encryptionKeys, {
      lock: true,
      onProgress: (table, p) => { process.stdout.write(`  blind indexes of ${table}: ${p.scanned}/${Math.max(p.total, p.scanned)} rows, ${p.rewritten} rewritten\n`) },
    })
    process.stdout.write(report === undefined ? 'Blind indexes already use one key per field.\n' : 'Blind indexes rebuilt with one key per field.\n')
  } finally {
    await db.close()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
