/**
 * `npm run rotate-keys [-- --lote N] [--nueva-clave-indice | --reindexar]`
 *
 * After ENCRYPTION_KEY was replaced (old key moved to ENCRYPTION_KEYS, and
 * every instance restarted with both), re-encrypts every stored value with
 * the new key, then the old key can be dropped from ENCRYPTION_KEYS. Runs
 * beside the live service; safe to interrupt and run again.
 * `--nueva-clave-indice` also replaces the blind-index key and rebuilds all
 * blind indexes (restart the instances afterwards); `--reindexar` rebuilds
 * them with the stored key (to finish an interrupted replacement).
 */
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import cliProgress from 'cli-progress'
import pino from 'pino'
import { loadConfig } from '../core/config.js'
import { ConfigError } from '../core/errors.js'
import { createFieldCipher } from '../core/crypto.js'
import { loadRegistry } from '../core/registry/load.js'
import { openDatabase } from '../db/open.js'
import type { EmbeddedDatabase } from '../db/embedded.js'
import { BLIND_INDEX_SCHEME, SystemKeyEntity, loadSystemKeys, recordBlindIndexScheme, rewrapSystemKeys } from '../db/system-keys.js'
import { hasEncryptedFields, rotateHistory, rotateModule, type RotationProgress } from '../records/integrity/key-rotation.js'

export interface RotateOptions {
  batchSize: number
  /** Replace the blind-index key and rebuild every blind index. */
  newIndexKey: boolean
  /** Rebuild every blind index with the stored key (finishes an interrupted --nueva-clave-indice). */
  reindex?: boolean
  quiet?: boolean
  env?: Record<string, string | undefined>
  /** An embedded database already running in this process (tests). */
  embedded?: EmbeddedDatabase
}

export interface RotateReport {
  keyId: string
  systemKeysRewrapped: number
  modules: Record<string, { scanned: number, rewritten: number }>
}

export async function rotateKeys (opts: RotateOptions): Promise<RotateReport> {
  const config = loadConfig(opts.env)
  const registry = loadRegistry(config.modulesFile)
  const db = await openDatabase(config, registry, pino({ level: 'silent' }), opts.embedded === undefined ? {} : { embedded: opts.embedded })
  try {
    const em = db.orm.em.fork()
    const macKeys = await loadSystemKeys(em, config.encryptionKeys)
    const systemKeysRewrapped = await rewrapSystemKeys(em, config.encryptionKeys)
    let indexKey = macKeys.indexKey
    if (opts.newIndexKey) {
      // Stored first: an interrupted rebuild is finished by --reindexar with this same key.
      indexKey = randomBytes(32)
      const wrap = createFieldCipher(config.encryptionKeys, macKeys)
      await em.nativeUpdate(SystemKeyEntity, { nombre: 'indice' }, { valor: wrap.encrypt(indexKey.toString('base64'), 'sys_claves', 'indice') })
    }
    const reindex = opts.newIndexKey || opts.reindex === true
    const cipher = createFieldCipher(config.encryptionKeys, { ...macKeys, indexKey })
    const report: RotateReport = { keyId: cipher.currentKeyId, systemKeysRewrapped, modules: {} }
    const bars = opts.quiet === true ? undefined : new cliProgress.MultiBar({ format: ' {bar} {percentage}% | {module} | {rows}/{totalRows} rows, {rewritten} rewritten', hideCursor: true, clearOnComplete: false }, cliProgress.Presets.shades_classic)
    const tracker = (label: string): ((p: RotationProgress) => void) => {
      const show = { module: label.padEnd(14), rows: 0, totalRows: 0, rewritten: 0 }
      const bar = bars?.create(1, 0, show)
      return (p) => {
        // The total is counted at the start; rows created meanwhile can push past it.
        const total = Math.max(p.total, p.scanned)
        bar?.setTotal(Math.max(total, 1))
        bar?.update(total === 0 ? 1 : p.scanned, { ...show, rows: p.scanned, totalRows: total, rewritten: p.rewritten })
      }
    }
    for (const mod of registry.modules.filter(hasEncryptedFields)) {
      const update = tracker(mod.name)
      const done = await rotateModule(em, mod, cipher, { batchSize: opts.batchSize, reindex, onProgress: update })
      update(done)
      report.modules[mod.name] = { scanned: done.scanned, rewritten: done.rewritten }
    }
    const update = tracker('(history)')
    const history = await rotateHistory(em, registry, cipher, { batchSize: opts.batchSize, reindex, onProgress: update })
    update(history)
    report.modules.sys_historial = { scanned: history.scanned, rewritten: history.rewritten }
    // Every index is now under its field's own key: the start need not rebuild them.
    if (reindex) await recordBlindIndexScheme(em, config.encryptionKeys, BLIND_INDEX_SCHEME)
    bars?.stop()
    return report
  } finally {
    await db.close()
  }
}

const HELP = `npm run rotate-keys [-- --lote N] [--nueva-clave-indice | --reindexar] [--help]
(in the image: node dist/bin/rotate-keys.js …)

After ENCRYPTION_KEY was replaced (the old key moved to ENCRYPTION_KEYS and
every instance restarted with both), re-encrypts every stored value and
re-wraps the system keys with the new key, showing a progress bar per
module; then the old key can leave ENCRYPTION_KEYS. Runs beside the live
service; safe to interrupt and run again. Uses DATABASE_URL (or the
embedded database under DATA_DIR when the service is not running).
  --lote N               rows per batch (1 to 10000, default 500)
  --nueva-clave-indice   also replace the blind-index key and rebuild every
                         blind index (restart the instances afterwards)
  --reindexar            rebuild the blind indexes with the stored key (to
                         finish an interrupted --nueva-clave-indice)
Exit status: 0 done; 1 failed (the message says why; run it again).
`

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' }, lote: { type: 'string', default: '500' }, 'nueva-clave-indice': { type: 'boolean', default: false }, reindexar: { type: 'boolean', default: false } } })
  if (values.help === true) { process.stdout.write(HELP); return }
  const batchSize = Number(values.lote)
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) throw new ConfigError('--lote must be a whole number from 1 to 10000')
  const report = await rotateKeys({ batchSize, newIndexKey: values['nueva-clave-indice'] === true, reindex: values.reindexar === true })
  const rewritten = Object.values(report.modules).reduce((n, m) => n + m.rewritten, 0)
  process.stdout.write(`\nCurrent key ${report.keyId}: ${rewritten} rows rewritten, ${report.systemKeysRewrapped} system keys re-wrapped.\n`)
  if (values['nueva-clave-indice'] === true) process.stdout.write('Blind indexes rebuilt with a new key: restart every instance now.\n')
  else process.stdout.write('Every value now uses the current key: remove the old keys from ENCRYPTION_KEYS and restart the instances.\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  })
}

