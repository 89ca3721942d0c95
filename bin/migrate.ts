/**
 * `npm run migrate`: brings the database schema in line with modules.yaml,
 * as the start does (additive changes applied under the advisory lock;
 * destructive ones refused), then exits. For a deployment step that runs
 * once before the instances (deploy/k8s/migrate-job.yaml); the instances
 * then find nothing left to do.
 *
 * `--apply <statement>` (repeatable) runs the statements a refused change
 * names instead, in one transaction, on PostgreSQL or on the embedded
 * database (which psql cannot reach).
 */
import { parseArgs } from 'node:util'
import pino from 'pino'
import { loadConfig, type Config } from '../core/config.js'
import { ConfigError } from '../core/errors.js'
import { loadRegistry } from '../core/registry/load.js'
import { openDatabase, type Database } from '../db/open.js'
import { planSchema, schemaRefusal, syncSchema } from '../db/schema-sync.js'
import { inTransaction } from '../db/transaction.js'
import { createFieldCipher } from '../core/crypto.js'
import { loadSystemKeys } from '../db/system-keys.js'
import { upgradeBlindIndexes } from '../records/integrity/blind-index-upgrade.js'

const HELP = `npm run migrate [-- --apply <statement> … | --help]  (in the image: node dist/bin/migrate.js)

Without options: brings the database schema in line with modules.yaml
exactly as the start does (additive changes only, under the same advisory
lock as the instances), rebuilds blind indexes still under the old single
index key (once, in one transaction, with progress; docs/user-guide.md "Encryption"),
then exits. Needs DATABASE_URL; waits for
PostgreSQL with back-off like the start (STARTUP_WAIT).

  --apply <statement>   run one SQL statement (repeat for several), e.g. the
                        ones a refused start names for a rename, a removal
                        or a type change. All run in one transaction: all or
                        none. Works on PostgreSQL (DATABASE_URL) and on the
                        embedded database (DATA_DIR/pgdata; stop npm start
                        first: it serves one process). Back up first. Then
                        says what the next start will do.

Exit status: 0 schema in line, or every statement applied (each is listed);
1 refused (a change would drop or rewrite data: the message lists the
statements), a statement failed (nothing applied), or another failure.
`

const say = (line: string): void => { process.stdout.write(`${line}\n`) }

/** Runs the statements in one transaction, one progress line each. */
async function applyStatements (db: Database, config: Config, statements: readonly string[]): Promise<void> {
  const clean = statements.map((s) => s.trim().replace(/;\s*$/, '')).filter((s) => s !== '')
  if (clean.length === 0) throw new ConfigError('--apply needs a statement, e.g. --apply \'ALTER TABLE "t" RENAME COLUMN "a" TO "b";\'')
  say(`Applying ${clean.length} statement(s) to the ${db.kind === 'embedded' ? 'embedded database' : 'database'} in one transaction…`)
  let current = 0
  try {
    await inTransaction(db.orm.em.fork(), async (em) => {
      for (const [i, s] of clean.entries()) {
        current = i
        const started = Date.now()
        await em.getConnection().execute(s, [], 'run', em.getTransactionContext())
        say(`  [${i + 1}/${clean.length}] ${s}; (${Date.now() - started} ms)`)
      }
    })
  } catch (err) {
    throw new ConfigError(`statement ${current + 1} of ${clean.length} failed: ${err instanceof Error ? err.message : String(err)}\n` +
      `  ${clean[current]!};\nNothing was applied (the transaction was rolled back).`)
  }
  say('Applied and committed.')
  // What the next start will make of it (nothing is applied here).
  const plan = await planSchema(db.orm)
  const refusal = schemaRefusal(config.modulesFile, plan, db.kind)
  if (refusal !== undefined) say(`The start would still refuse:\n${refusal.message}`)
  else say(plan.safe.length === 0 ? 'The schema matches modules.yaml: the start has nothing to do.' : `The next start (or npm run migrate) applies ${plan.safe.length} additive statement(s).`)
}

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' }, apply: { type: 'string', multiple: true } } })
  if (values.help === true) { process.stdout.write(HELP); return }
  const config = loadConfig()
  const apply = values.apply
  if (apply === undefined && config.databaseUrl === undefined) throw new ConfigError('npm run migrate needs DATABASE_URL (the embedded database is brought in line by npm start itself; --apply works on it)')
  const registry = loadRegistry(config.modulesFile)
  const log = pino({ level: 'warn' }, pino.destination(2))
  const db = await openDatabase(config, registry, log, { waitMs: config.startupWaitMs })
  try {
    if (apply !== undefined) { await applyStatements(db, config, apply); return }
    say(`Comparing the database schema with ${config.modulesFile}…`)
    const applied = await syncSchema(db.orm, config.modulesFile, db.kind, registry.modules)
    for (const s of applied) say(`  ${s};`)
    say(applied.length === 0 ? 'The schema was already in line; nothing to apply.' : `${applied.length} statements applied.`)
    // Blind indexes of before one key per field: rebuilt once, in one transaction (docs/user-guide.md "Encryption").
    const keys = await loadSystemKeys(db.orm.em.fork(), config.encryptionKeys)
    const cipher = createFieldCipher(config.encryptionKeys, keys)
    const report = await upgradeBlindIndexes(db.orm.em, registry, cipher, config.encryptionKeys, {
      lock: true,
      onProgress: (table, p) => { say(`  blind indexes of ${table}: ${p.scanned}/${Math.max(p.total, p.scanned)} rows, ${p.rewritten} rewritten`) },
    })
    say(report === undefined ? 'Blind indexes already use one key per field.' : 'Blind indexes rebuilt with one key per field.')
  } finally {
    await db.close()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
