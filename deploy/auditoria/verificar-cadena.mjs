#!/usr/bin/env node
/**
 * The auditor's independent verifier (docs/operator-guide.md, "Integrity"). It shares no
 * code with the service: everything it computes follows docs/operator-guide.md.
 *
 * Two checks:
 *
 * 1. A whole database against the signed checkpoints of its global chain
 *    (cadena-global.mjs): rollbacks, truncation, rewritten or edited history
 *    entries, and, given the keys, blind indexes.
 *
 *      node deploy/auditoria/verificar-cadena.mjs --db postgres://… \
 *           --puntos-control <dir> [--puntos-control <dir> …] --clave-publica <base64> \
 *           [--modulos modules.yaml] [--clave-cifrado <base64>[,<base64>…]] [--clave-indice <base64>] [--clave-integridad <base64>]
 *
 *    It reads the database in one snapshot and recomputes every live row's
 *    _hash from its values (given --modulos; encrypted values need
 *    --clave-cifrado and --clave-integridad).
 *
 * 2. One record's hash chain, from the API's output:
 *
 *      curl -H "Authorization: Bearer $T" $URL/denuncias/DEN-2026-00001/historial > h.json
 *      node deploy/auditoria/verificar-cadena.mjs h.json --modulo denuncias \
 *           [--modulos modules.yaml] [--tz Europe/Madrid] [--clave-integridad <base64>]
 *
 *    Records with encrypted fields need the integrity key (npm run
 *    integrity-key) and a history read by a user who may decrypt them. Each
 *    version is checked under its own seal format (`sello`): 2 leaves out
 *    declared fields without a value; 3 is 2 plus `_clave`, the HMAC under
 *    the integrity key of "sello" NUL _id NUL _version; 4 is 3 with each
 *    encrypted sub-field of a structured array's items as the HMAC of its
 *    plaintext; 1 holds the fields
 *    named in `campos_sellados`, null included. A history exported before `sello`
 *    existed is all format 1 with every field of --modulos. An erasure's
 *    version (`suprimir`) also seals `_supresion`, the HMAC under the
 *    integrity key of its certificate (so it needs --clave-integridad); each version before it holds as the residue the newest
 *    erasure's certificate gives (docs/operator-guide.md "Erasures").
 *
 * Exit code 0 when everything checks, 1 when something does not, 2 on a
 * usage error or an input it cannot read (never a stack trace).
 */
import { createHash, createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { parse as parseYaml } from 'yaml'

const USAGE = `usage:
  verificar-cadena.mjs --db <url> --puntos-control <dir> [--puntos-control <dir> …] --clave-publica <base64>
                       [--modulos modules.yaml] [--clave-cifrado <base64>[,<base64>…]] [--clave-indice <base64>] [--clave-integridad <base64>]
      checks a whole database against its signed checkpoints (public key: npm run integrity-key -- --publica;
      blind indexes: --clave-cifrado ENCRYPTION_KEY[,ENCRYPTION_KEYS] and --clave-indice from npm run integrity-key -- --indice;
      live rows recomputed with --modulos, and for encrypted fields --clave-cifrado and --clave-integridad from npm run integrity-key)
  verificar-cadena.mjs <history.json> --modulo <name> [--modulos modules.yaml] [--tz Europe/Madrid] [--clave-integridad <base64>]
                       [--archivos <FILES_DIR> [--clave-cifrado <base64>[,<base64>…]]]
      checks one record's chain from the answer of GET /{module}/{id}/historial; with --archivos, also rehashes
      every evidence file a version names (encrypted ones need --clave-cifrado)
Exit status: 0 intact, 1 not intact, 2 usage error or unreadable input (an unreadable checkpoint file too).`

/** A usage error or an input that cannot be read: a message and exit 2, never a stack trace. */
function fail (message) {
  console.error(message)
  process.exit(2)
}

let opt, positionals
try {
  ({ values: opt, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      modulo: { type: 'string' }, modulos: { type: 'string' }, tz: { type: 'string', default: 'Europe/Madrid' }, 'clave-integridad': { type: 'string' },
      db: { type: 'string' }, 'puntos-control': { type: 'string', multiple: true }, 'clave-publica': { type: 'string' },
      'clave-cifrado': { type: 'string' }, 'clave-indice': { type: 'string' }, archivos: { type: 'string' },
    },
  }))
} catch (err) { fail(`${err.message}\n${USAGE}`) }
if (opt.help) { console.log(USAGE); process.exit(0) }

const readYaml = (file) => {
  let text
  try { text = readFileSync(file, 'utf8') } catch (err) { fail(`cannot read ${file}: ${err.message}`) }
  try { return parseYaml(text) } catch (err) { fail(`${file} is not valid YAML: ${err.message}`) }
}

// Canonical JSON: keys sorted (UTF-16 order) at every depth, no spaces.
const canonical = (v) => v === null || typeof v !== 'object'
  ? JSON.stringify(v ?? null)
  : Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
    : `{${Object.keys(v).filter((k) => v[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`

/**
 * What enters a version's _hash (docs/operator-guide.md "The hash chain"): `r` the record
 * (API form: declared fields by name), `at` the UTC instant
 * (YYYY-MM-DDTHH:MM:SSZ) of each datetime field and of _created, _modified
 * and _deleted, `hmac(name, plaintext)` the digest of an encrypted value,
 * `sealedNulls` the fields that enter even when null (format 1). A password
 * the record does not carry (the API never shows one) enters as '(?)': not
 * verifiable; `sello` the version's seal format (3 adds `_clave`, 4 digests encrypted sub-fields). Also used
 * on live rows by cadena-global.mjs.
 */
/**
 * Format 4: an item of a structured array with each encrypted sub-field's
 * value as the HMAC of its plaintext (a string as it is, else canonical
 * JSON); texts and other items as they are.
 */
function digestedItem (item, name, subs, hmac) {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return item
  return Object.fromEntries(Object.entries(item).map(([k, x]) =>
    [k, subs[k]?.encrypted === true && x !== null ? hmac(`${name}.${k}`, typeof x === 'string' ? x : canonical(x)) : x]))
}

function payloadOf (r, fields, { prev, sealedNulls, at, hmac, sello }) {
  const payload = { _id: r._id, _version: r._version, _created_by: r._created_by, _modified_by: r._modified_by, _deleted: null, _prev: prev }
  for (const [name, f] of Object.entries(fields)) {
    if (f.type === 'password' && r[name] === undefined) { payload[name] = '(?)'; continue }
    let value = r[name] ?? null
    if (value === null && !sealedNulls.has(name)) continue
    // A file field's `encrypted` is its files' bytes: its value is plain.
    if (f.encrypted && f.type !== 'file' && value !== null) {
      // An encrypted instant is digested as its UTC form, like a plain datetime in the payload.
      const plain = f.type === 'datetime' ? at[name] : typeof value === 'string' ? value : canonical(value)
      value = hmac(name, plain)
    } else if (f.type === 'datetime' && value !== null) value = at[name]
    else if (sello === 4 && f.items != null && Array.isArray(value)) value = value.map((item) => digestedItem(item, name, f.items, hmac))
    payload[name] = value
  }
  for (const k of ['_created', '_modified', '_deleted']) if (at[k] !== undefined) payload[k] = at[k]
  // Formats 3 and 4 (a module with encrypted fields): one keyed entry, so no reader can test which encrypted fields are empty.
  if (sello >= 3) payload._clave = hmac('_clave', `sello\u0000${r._id}\u0000${r._version}`)
  return payload
}

if (opt.db !== undefined) {
  if (positionals.length > 0 || opt['puntos-control'] === undefined || opt['clave-publica'] === undefined) fail(USAGE)
  const { auditDatabase, UsageError } = await import('./cadena-global.mjs')
  let pg
  try { ({ default: pg } = await import('pg')) } catch { fail('reading the database needs the pg package: npm install pg') }
  let client
  try { client = new pg.Client({ connectionString: opt.db }) } catch (err) { fail(`--db is not a valid PostgreSQL URL: ${err.message}`) }
  let result
  try {
    await client.connect()
    result = await auditDatabase({
      client,
      dirs: opt['puntos-control'],
      publicKey: opt['clave-publica'],
      modules: opt.modulos === undefined ? undefined : readYaml(opt.modulos),
      encryptionKeys: opt['clave-cifrado']?.split(',').filter((k) => k.trim() !== ''),
      indexKey: opt['clave-indice'],
      integrityKey: opt['clave-integridad'],
      payloadOf,
      say: (line) => console.log(line),
    })
  } catch (err) {
    await client.end().catch(() => {})
    fail(err instanceof UsageError ? err.message : `could not read the database (${opt.db.replace(/\/\/[^@/]*@/, '//…@')}): ${err.message}; check --db and that the database answers`)
  }
  await client.end().catch(() => {})
  const { problems, unreadable } = result
  // An unreadable file is an outage of the store, not tampering: said apart, exit 2 unless something is wrong.
  for (const u of unreadable) console.error(`${u.file} ${u.unreadable}: not a checkpoint (a write cut short or a damaged store, not a forgery); restore it from a copy or move it out of the directory`)
  if (problems.length > 0) {
    console.log(`The database is NOT intact: ${problems.length} problems.`)
    process.exit(1)
  }
  if (unreadable.length > 0) {
    console.error(`Database intact against its readable checkpoints; ${unreadable.length} checkpoint files could not be read (above).`)
    process.exit(2)
  }
  console.log('Database intact against its checkpoints.')
  process.exit(0)
}

if (positionals.length !== 1 || opt.modulo === undefined) fail(USAGE)
opt.modulos ??= 'modules.yaml'

// 'YYYY-MM-DD HH:MM:SS' in the zone → every UTC instant it can name ('YYYY-MM-DDTHH:MM:SSZ').
const fmt = new Intl.DateTimeFormat('en-GB', { timeZone: opt.tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
const wall = (ms) => { const p = Object.fromEntries(fmt.formatToParts(ms).map((x) => [x.type, x.value])); return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}` }
function instants (local) {
  const [d, t] = local.split(' ')
  const naive = Date.parse(`${d}T${t}Z`)
  const found = new Set()
  for (let off = -14; off <= 14; off++) { const ms = naive - off * 3_600_000; if (wall(ms) === local) found.add(new Date(ms).toISOString().replace('.000Z', 'Z')) }
  return [...found]
}

const registry = readYaml(opt.modulos)
const fields = registry?.modules?.[opt.modulo]?.fields
if (fields === undefined) fail(`unknown module: ${opt.modulo} (not in ${opt.modulos}; pass the modules.yaml in force with --modulos)`)
const key = opt['clave-integridad'] === undefined ? undefined : Buffer.from(opt['clave-integridad'], 'base64')
let input
try { input = JSON.parse(readFileSync(positionals[0], 'utf8')) } catch (err) { fail(`${positionals[0]} is not readable JSON (${err.message}): save the answer of GET /{module}/{id}/historial`) }
const versions = (input?.data ?? input)?.versiones
if (!Array.isArray(versions) || versions.some((v) => typeof v !== 'object' || v === null || typeof v.registro !== 'object' || v.registro === null)) {
  fail(`${positionals[0]} is not the answer of GET /{module}/{id}/historial (data.versiones with each registro is missing)`)
}

// An erasure of personal data (docs/operator-guide.md "The hash chain", "Erasures"): the version that writes it seals its
// certificate as `_supresion` (keyed: the integrity key's HMAC); each earlier version, its values erased, holds as the residue the newest such certificate gives.
const covering = versions.map((v, i) => versions.slice(i + 1).filter((w) => w.accion === 'suprimir' && w.supresion != null).at(-1))

let prev = ''
let ok = true
for (const [i, v] of versions.entries()) {
  // A file's `subido` is shown in the zone and sealed in UTC (the earlier instant on the autumn fold).
  const r = { ...v.registro }
  for (const [name, f] of Object.entries(fields)) {
    if (f.type === 'file' && Array.isArray(r[name])) r[name] = r[name].map((it) => it !== null && typeof it === 'object' && typeof it.subido === 'string' && / /.test(it.subido) ? { ...it, subido: instants(it.subido)[0] ?? it.subido } : it)
  }
  if (Array.isArray(r._restringidos) && r._restringidos.length > 0) {
    console.error(`version ${v._version} withholds encrypted fields (${r._restringidos.join(', ')}): read the history as a user who may decrypt them`)
    process.exit(2)
  }
  // Every datetime may name two instants on the autumn fold: try each combination.
  const datetimeKeys = [...Object.entries(fields).filter(([, f]) => f.type === 'datetime').map(([k]) => k), '_created', '_modified', '_deleted']
    .filter((k) => typeof r[k] === 'string')
  // Fields that enter even when null: format 1's sealed fields (all declared ones for an export without `sello`).
  const sello = v.sello ?? 1
  if (![1, 2, 3, 4].includes(sello)) { console.error(`version ${v._version} has an unknown seal format: ${sello}; use a newer verificar-cadena.mjs`); process.exit(2) }
  const sealedNulls = new Set(sello !== 1 ? [] : v.campos_sellados ?? Object.keys(fields))
  if (sello >= 3 && key === undefined) { console.error(`version ${v._version} is sealed in format ${sello} (a module with encrypted fields): pass --clave-integridad (npm run integrity-key)`); process.exit(2) }
  const unknown = [...sealedNulls].filter((k) => fields[k] === undefined)
  if (unknown.length > 0) { console.error(`version ${v._version} was sealed with fields ${opt.modulos} does not declare (${unknown.join(', ')}): use the modules.yaml in force`); process.exit(2) }
  let combos = [{}]
  for (const k of datetimeKeys) combos = combos.flatMap((c) => instants(r[k]).map((i) => ({ ...c, [k]: i })))
  const hmac = (name, plain) => {
    if (key === undefined) { console.error(`${name} is encrypted: pass --clave-integridad (npm run integrity-key)`); process.exit(2) }
    return createHmac('sha256', key).update(plain, 'utf8').digest('hex')
  }
  const sealed = (dt) => {
    const payload = payloadOf(r, fields, { prev, sealedNulls, at: dt, hmac, sello })
    if (v.supresion != null) payload._supresion = hmac('_supresion', canonical(v.supresion))
    return createHash('sha256').update(canonical(payload), 'utf8').digest('hex')
  }
  const hashes = combos.map(sealed)
  const cover = covering[i]
  const line = cover?.supresion.versiones?.find((x) => x.version === v._version)
  // Covered by an erasure: its stored values give its residue, and the certificate gives its hash.
  const expected = cover === undefined ? v._hash : line?.hash === v._hash ? line.residuo : undefined
  const hasPassword = Object.values(fields).some((f) => f.type === 'password')
  const good = hasPassword ? undefined : expected !== undefined && hashes.includes(expected) && r._hash === v._hash
  if (good === false) ok = false
  const erased = cover === undefined ? '' : ` (its personal data erased at version ${cover._version})`
  console.log(`version ${v._version} (${v.accion}, ${v.fecha}): ${good === undefined ? 'not verifiable (passwords)' : good ? `correct${erased}` : 'DOES NOT MATCH'}`)
  prev = v._hash
}
if (opt.archivos !== undefined) {
  const { checkFiles } = await import('./archivos.mjs')
  const keys = (opt['clave-cifrado'] ?? '').split(',').filter((k) => k !== '').map((k) => Buffer.from(k, 'base64'))
  const recordId = versions[0]?.registro?._id
  const problems = checkFiles(opt.archivos, recordId, fields, versions, keys)
  for (const p of problems) console.log(`file ${p.id} (named from version ${p.version}): ${p.problem}`)
  if (problems.length > 0) ok = false
  else console.log('Files intact.')
}
console.log(ok ? 'Chain intact.' : 'The chain is NOT intact.')
process.exit(ok ? 0 : 1)
