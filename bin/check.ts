/**
 * `npm run check [file]`: refuses what the start would refuse, without
 * starting the service: modules.yaml (or MODULES_FILE, or the file given),
 * the environment (loadConfig: secrets, production guards, CORS_ORIGINS,
 * TRUST_PROXY …), a role able to be the first superadmin, ADMIN_PASSWORD
 * against the users module's rules, CHECKPOINT_DIR, and, with
 * DATABASE_URL or an embedded database in DATA_DIR, the database:
 * reachable, the schema change the start would make (refused when it would
 * lose or rewrite data, or rename a field; the indexes it would drop), the stored system keys against
 * ENCRYPTION_KEY(S). It writes nothing to the database.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { compileAccess } from '../core/access.js'
import { loadConfig, type Config } from '../core/config.js'
import { ConfigError } from '../core/errors.js'
import { redactUrl } from '../core/redact-url.js'
import { describeRedis } from '../core/redis-config.js'
import { loadRegistry } from '../core/registry/load.js'
import { labelWarnings } from '../core/registry/label-report.js'
import type { Registry } from '../core/registry/types.js'
import { UNINDEXED_SYSTEM_FILTERS, unindexedSearches } from '../core/registry/index-report.js'
import { openDatabase } from '../db/open.js'
import { planSchema, schemaRefusal } from '../db/schema-sync.js'
import { checkSystemKeys } from '../db/system-keys.js'
import { trustProxyWarning } from '../http/trust-proxy.js'
import { otherChainsFiles, sharedStore, storedChainIdentity } from '../records/integrity/chain-identity.js'

const HELP = `npm run check [-- [file] [--sin-entorno] [--help]]
(in the image: node dist/bin/check.js …)

Checks what the start would refuse, and says what it checked:
  - modules.yaml (the file given, or MODULES_FILE, or ./modules.yaml); it
    warns of each module, field, sub-field, state and enum value without a
    label (a person then reads its name), and names the filters and
    searches it allows that no index serves;
  - the environment, read as the start reads it (docs/operator-guide.md "Configuration");
  - a role in usuarios.rol holding "*.*" (the first superadmin's), and
    ADMIN_PASSWORD against the users module's rules;
  - CHECKPOINT_DIR can be created and written;
  - with DATABASE_URL, or the embedded database in DATA_DIR/pgdata when it
    exists (stop npm start first: it serves one process): the database
    answers, the schema change the start would make (additive changes are
    listed; a rename, or one that would drop or rewrite data, is refused
    as the start refuses it, with the statements to run), and the stored
    system keys open with ENCRYPTION_KEY / ENCRYPTION_KEYS, and CHECKPOINT_DIR
    holds no other chain's checkpoints. Nothing is written to it.
  --sin-entorno   check modules.yaml only (no environment, no database)
Exit status: 0 all checked (warnings included); 1 something the start would refuse (the
message says what to fix).
`

const say = (line: string): void => { process.stdout.write(`${line}\n`) }

function checkRegistry (file: string): Registry {
  const registry = loadRegistry(file)
  const fields = registry.modules.reduce((n, m) => n + m.fields.length, 0)
  say(`${file}: OK — ${registry.modules.length} modules, ${fields} fields, ${registry.roles.length} roles`)
  for (const m of registry.modules) {
    say(`  /${m.path.padEnd(14)} ${m.prefix.padEnd(4)} ${String(m.fields.length).padStart(2)} fields${m.stateField === undefined ? '' : `, state ${m.stateField}`}`)
  }
  reportLabels(file)
  reportIndexes(registry)
  const access = compileAccess(registry)
  const superRole = registry.usersModule.fieldMap.get('rol')?.enum?.find((r) => access.isSuper(r))
  if (superRole === undefined) throw new ConfigError(`${file}: no role in usuarios.rol holds "*.*"; the start could not create the first superadmin. Give one role "*.*" under roles`)
  say(`first superadmin role: ${superRole}`)
  return registry
}

function checkEnvironment (config: Config, registry: Registry): void {
  say(`environment: OK — ${config.production ? 'production' : 'development'}; database ${config.databaseUrl === undefined ? 'embedded (DATA_DIR/pgdata)' : redactUrl(config.databaseUrl)}; ` +
    `shared state ${config.redis === undefined ? 'in-process' : describeRedis(config.redis)}; CORS ${config.corsOrigins.length === 0 ? 'off' : config.corsOrigins.join(', ')}; ` +
    `metrics ${config.metricsPort === 0 ? 'off' : `port ${config.metricsPort}`}; start-up wait ${config.startupWaitMs === 0 ? 'unlimited' : `${config.startupWaitMs / 1000} s`}`)
  const trust = config.trustProxy
  say(`client address: X-Forwarded-For ${trust === false ? 'ignored' : Array.isArray(trust) ? `read from ${trust.join(', ')}` : trust === true ? 'read from every peer' : `read ${String(trust)} hop(s) back`}; ` +
    `per-IP limit exempt: ${config.rateLimit.ipExempt.entries.length === 0 ? 'none' : config.rateLimit.ipExempt.entries.join(', ')}; HSTS ${config.hsts ? 'on' : 'off'}`)
  const warning = trustProxyWarning(trust)
  if (warning !== undefined) say(`warning: ${warning}`)
  const min = registry.usersModule.fieldMap.get('password')?.minLength
  if (config.adminPassword !== undefined && min !== undefined && config.adminPassword.length < min) {
    throw new ConfigError(`ADMIN_PASSWORD is shorter than the ${min} characters modules.yaml asks of usuarios.password; the start would refuse to create the first superadmin with it`)
  }
  try {
    mkdirSync(config.checkpointDir, { recursive: true })
    accessSync(config.checkpointDir, constants.W_OK)
  } catch (err) {
    throw new ConfigError(`CHECKPOINT_DIR ${config.checkpointDir} cannot be created or written (${err instanceof Error ? err.message : String(err)}); point it at a writable directory`)
  }
  say(`checkpoint directory: ${config.checkpointDir} (writable)`)
}

/** What has no label (a person reads its name) or shares one: warnings, not refusals (docs/administrator-guide.md "Labels"). */
function reportLabels (file: string): void {
  const warnings = labelWarnings(readFileSync(file, 'utf8'), file)
  if (warnings.length === 0) { say('labels: every module, field, sub-field, state and enum value has one'); return }
  say(`labels: ${warnings.length} warning(s); a person reads the name where a label is missing (add "label:", or "enum_labels:" on the field — docs/administrator-guide.md "Labels"):`)
  for (const w of warnings) say(`warning: ${w.where}: ${w.path}: ${w.what}`)
}

/** The filters and searches no index serves (they answer by reading the table): what to declare if they are used. */
function reportIndexes (registry: Registry): void {
  say(`filters and searches without an index (they answer, reading the table; declare "indexed" / "contains_index" / "full_text" where they are used — docs/administrator-guide.md "Indexes"):`)
  for (const u of registry.modules.map(unindexedSearches)) {
    const parts = [
      ...(u.filters.length > 0 ? [`filters ${u.filters.join(', ')}`] : []),
      ...(u.contains.length > 0 ? [`contiene ${u.contains.join(', ')}`] : []),
      ...(u.fullText ? [] : ['q (no full_text fields: answers 400)']),
    ]
    say(`  ${u.module.padEnd(14)} ${parts.length === 0 ? 'none' : parts.join('; ')}`)
  }
  say(`  every module   filters ${UNINDEXED_SYSTEM_FILTERS.join(', ')}`)
}

async function checkDatabase (config: Config, registry: Registry, file: string): Promise<void> {
  const embeddedPath = join(config.dataDir, 'pgdata')
  if (config.databaseUrl === undefined && !existsSync(embeddedPath)) { say(`database: not checked (no DATABASE_URL, and no embedded database in ${embeddedPath} yet: the first start creates it)`); return }
  let db
  try {
    db = await openDatabase(config, registry, pino({ level: 'silent' }))
  } catch (err) {
    // The embedded database's own refusal (in use by npm start) says what to do.
    if (config.databaseUrl === undefined || err instanceof ConfigError) throw err
    throw new ConfigError(`PostgreSQL at ${redactUrl(config.databaseUrl)} cannot be reached (${err instanceof Error ? err.message : String(err)}); check DATABASE_URL and that the database is up (the start would wait for it)`)
  }
  try {
    const plan = await planSchema(db.orm)
    const refusal = schemaRefusal(file, plan, db.kind)
    if (refusal !== undefined) throw refusal
    say(`database schema: OK — ${plan.safe.length === 0 ? 'matches modules.yaml' : `the start will apply ${plan.safe.length} additive statement(s):`}`)
    for (const s of plan.safe) say(`  ${s};`)
    const creates = plan.safe.some((s) => /create table "sys_claves"/i.test(s))
    if (creates) say('system keys: none yet (the first start creates them)')
    else say(`system keys: ${await checkSystemKeys(db.orm.em.fork(), config.encryptionKeys)} stored, all open with ENCRYPTION_KEY / ENCRYPTION_KEYS`)
    // The start refuses a checkpoint store holding another chain's checkpoints.
    const cadena = creates ? undefined : await storedChainIdentity(db.orm.em.fork())
    const foreign = otherChainsFiles(config.checkpointDir, cadena)
    if (foreign.length > 0) throw sharedStore(config.checkpointDir, cadena ?? '(not made yet: the first start makes it)', foreign)
    say(`checkpoint store: ${cadena === undefined ? 'no chain identity yet' : `chain ${cadena}`}, no other chain's checkpoints`)
  } finally {
    await db.close()
  }
}

async function main (): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' }, 'sin-entorno': { type: 'boolean' } } })
  if (values.help === true) { process.stdout.write(HELP); return }
  const file = resolve(positionals[0] ?? process.env.MODULES_FILE ?? 'modules.yaml')
  const registry = checkRegistry(file)
  if (values['sin-entorno'] === true) { say('environment and database: not checked (--sin-entorno)'); return }
  const config = { ...loadConfig(), modulesFile: file }
  checkEnvironment(config, registry)
  await checkDatabase(config, registry, file)
  say('OK: the start would accept this.')
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
