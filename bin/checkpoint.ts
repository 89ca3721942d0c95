/**
 * `npm run checkpoint`: seals the global chain and publishes a signed
 * checkpoint of its head now (docs/operator-guide.md "Integrity"), as the running service
 * does every CHECKPOINT_INTERVAL: one new file in CHECKPOINT_DIR, and the
 * checkpoint on standard output. Needs the database and ENCRYPTION_KEY
 * (the signing key is kept wrapped by it). Exit status 1 when the chain no
 * longer extends the newest checkpoint known, when the file cannot be
 * written (a full or read-only CHECKPOINT_DIR), or on any failure.
 */
import { parseArgs } from 'node:util'
import pino from 'pino'
import { loadConfig } from '../core/config.js'
import { ConfigError, REASONS } from '../core/errors.js'
import { loadRegistry } from '../core/registry/load.js'
import { openDatabase } from '../db/open.js'
import { loadSystemKeys } from '../db/system-keys.js'
import { chainIdentity, sharedStore } from '../records/integrity/chain-identity.js'
import { createSigner } from '../records/integrity/checkpoint-format.js'
import { Checkpoints } from '../records/integrity/checkpoints.js'

const HELP = `npm run checkpoint [-- --help]
(in the image: node dist/bin/checkpoint.js)

Seals every history entry that became stable into the global chain and
publishes a signed checkpoint of its head: a new file in CHECKPOINT_DIR
(default DATA_DIR/puntos-control) and a JSON line on standard output.
Uses DATABASE_URL (or the embedded database under DATA_DIR, when the
service is not running) and ENCRYPTION_KEY, like the service.
Exit status: 0 published; 1 refused (the chain no longer extends the newest
checkpoint: run deploy/auditoria/verificar-cadena.mjs --db), not written
(CHECKPOINT_DIR full or not writable; the message says which), CHECKPOINT_DIR
holding another deployment's checkpoints, or failed.
`

async function main (): Promise<number> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help === true) { process.stdout.write(HELP); return 0 }
  const config = loadConfig()
  const db = await openDatabase(config, loadRegistry(config.modulesFile), pino({ level: 'silent' }))
  try {
    const em = db.orm.em.fork()
    const keys = await loadSystemKeys(em, config.encryptionKeys)
    const cadena = await chainIdentity(em)
    const checkpoints = new Checkpoints({
      signer: createSigner(keys.signingSeed),
      cadena,
      dir: config.checkpointDir,
      onPublish: (cp, file) => { if (file !== undefined) process.stderr.write(`Checkpoint ${cp.seq} published in ${file}.\n`) },
      onProblem: (message) => { process.stderr.write(`${message}\n`) },
    })
    const foreign = checkpoints.foreignFiles()
    if (foreign.length > 0) throw sharedStore(config.checkpointDir, cadena, foreign)
    checkpoints.readDirectory()
    const { checkpoint, sealed, refused, unpublished } = await checkpoints.run(em, true)
    process.stderr.write(`${sealed?.sealed ?? 0} entries sealed.\n`)
    if (refused !== undefined || checkpoint === undefined) {
      process.stderr.write(`No checkpoint signed: ${refused === undefined ? 'the chain could not be sealed; run the command again' : `${REASONS[refused]}; have an auditor run deploy/auditoria/verificar-cadena.mjs --db before anything is signed again`}.\n`)
      return 1
    }
    process.stdout.write(`${JSON.stringify(checkpoint)}\n`)
    if (unpublished !== undefined) {
      process.stderr.write(`Checkpoint ${checkpoint.seq} was signed and stored in the database, but NOT published to CHECKPOINT_DIR (above); exit status 1.\n`)
      return 1
    }
    return 0
  } finally {
    await db.close()
  }
}

main().then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
