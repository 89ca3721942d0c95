/**
 * `npm run integrity-key`: prints the integrity key (base64), which an
 * auditor needs to recompute `_hash` of records with encrypted fields
 * (deploy/auditoria/verificar-cadena.mjs). Treat it as a secret.
 */
import pino from 'pino'
import { loadConfig } from '../core/config.js'
import { ConfigError } from '../core/errors.js'
import { loadRegistry } from '../core/registry/load.js'
import { openDatabase } from '../db/open.js'
import { loadSystemKeys } from '../db/system-keys.js'

async function main (): Promise<void> {
  const config = loadConfig()
  const db = await openDatabase(config, loadRegistry(config.modulesFile), pino({ level: 'silent' }))
  try {
    const keys = await loadSystemKeys(db.orm.em.fork(), config.encryptionKeys)
    process.stdout.write(`${keys.integrityKey.toString('base64')}\n`)
  } finally {
    await db.close()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
