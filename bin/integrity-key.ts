/**
 * `npm run integrity-key [-- --publica | --indice]`: prints, base64, one of
 * the keys an auditor needs (docs/operator-guide.md "Integrity"):
 *
 * - (no option) the integrity key, to recompute `_hash` of records with
 *   encrypted fields (deploy/auditoria/verificar-cadena.mjs). A secret.
 * - `--publica` the Ed25519 public key that verifies checkpoints of the
 *   global chain. Not a secret: hand it to whoever must check them.
 * - `--indice` the blind-index key, to recompute blind indexes
 *   (verificar-cadena.mjs --db --clave-indice). A secret.
 */
import { parseArgs } from 'node:util'
import pino from 'pino'
import { loadConfig } from '../core/config.js'
import { ConfigError } from '../core/errors.js'
import { loadRegistry } from '../core/registry/load.js'
import { openDatabase } from '../db/open.js'
import { loadSystemKeys } from '../db/system-keys.js'
import { createSigner } from '../records/integrity/checkpoint-format.js'

const HELP = `npm run integrity-key [-- --publica | --indice | --help]
(in the image: node dist/bin/integrity-key.js …)

Prints (base64) a key an auditor needs, read from the database (sys_claves)
and unwrapped with ENCRYPTION_KEY:
  (none)      the integrity key: recompute _hash of records with encrypted fields (secret)
  --publica   the Ed25519 public key that verifies the global chain's checkpoints (public)
  --indice    the blind-index key: recompute blind indexes (secret)
Uses DATABASE_URL (or the embedded database under DATA_DIR when the
service is not running) and ENCRYPTION_KEY, like the service.
Exit status: 0 printed; 1 failed (the message says why).
`

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' }, publica: { type: 'boolean' }, indice: { type: 'boolean' } } })
  if (values.help === true) { process.stdout.write(HELP); return }
  if (values.publica === true && values.indice === true) throw new ConfigError('choose one of --publica and --indice')
  const config = loadConfig()
  const db = await openDatabase(config, loadRegistry(config.modulesFile), pino({ level: 'silent' }))
  try {
    const keys = await loadSystemKeys(db.orm.em.fork(), config.encryptionKeys)
    const out = values.publica === true ? createSigner(keys.signingSeed).publicKey : (values.indice === true ? keys.indexKey : keys.integrityKey).toString('base64')
    process.stdout.write(`${out}\n`)
  } finally {
    await db.close()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
