/**
 * The auditor's check of a whole database against the signed checkpoints of
 * its global chain (README, "Integrity"), for verificar-cadena.mjs --db.
 * Shares no code with the service: everything here follows the README.
 *
 *   entry  = SHA-256 hex of the canonical JSON of {accion, campos, fecha,
 *            hash, modulo, registro, sello, usuario, version} of a
 *            sys_historial row, fecha as UTC YYYY-MM-DDTHH:MM:SS.ffffffZ
 *   link 0 = 64 zeros; link n = SHA-256 hex of (link n-1 + entry n)
 *   checkpoint = {formato: 1, seq, cabeza, fecha, firma}: firma is the
 *            Ed25519 signature of the canonical JSON of the other four
 *   blind index = hex HMAC-SHA-256(field key, trimmed upper-case value),
 *            field key = HKDF-SHA-256(index key, empty salt,
 *            "indice-ciego:<module>.<field>", 32 bytes)
 *
 * Returns the problems found (integrity failures); throws a UsageError for
 * input it cannot work with.
 */
import { createDecipheriv, createHash, createHmac, createPublicKey, hkdfSync, verify } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export class UsageError extends Error {}

export const canonical = (v) => v === null || typeof v !== 'object'
  ? JSON.stringify(v ?? null)
  : Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
    : `{${Object.keys(v).filter((k) => v[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
const sha = (s) => createHash('sha256').update(s, 'utf8').digest('hex')
const GENESIS = '0'.repeat(64)
const FECHA = `to_char(h.fecha at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
const fold = (name) => name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-zA-Z0-9_]/g, '_').toLowerCase()

/**
 * `_clave` of a version sealed in format 3 (sello 3: a module with encrypted
 * fields): hex HMAC-SHA-256 under the integrity key of "sello" NUL _id NUL
 * _version. A recomputed payload of such a version holds it beside `_prev`.
 */
export const sealKeyEntry = (integrityKey, id, version) => createHmac('sha256', integrityKey).update(`sello\u0000${id}\u0000${version}`, 'utf8').digest('hex')

export const entryHash = (h) => sha(canonical({ accion: h.accion, campos: h.campos, fecha: h.fecha, hash: h.hash, modulo: h.modulo, registro: h.registro, sello: Number(h.sello), usuario: h.usuario, version: Number(h.version) }))

function publicKeyOf (b64) {
  const raw = Buffer.from(b64 ?? '', 'base64')
  if (raw.length !== 32) throw new UsageError('--clave-publica must be the Ed25519 public key in base64 (32 bytes): npm run integrity-key -- --publica')
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
}

const wellFormed = (c) => c !== null && typeof c === 'object' && c.formato === 1 && Number.isSafeInteger(c.seq) && c.seq >= 0 &&
  typeof c.cabeza === 'string' && /^[0-9a-f]{64}$/.test(c.cabeza) && typeof c.fecha === 'string' && typeof c.firma === 'string'
const signatureHolds = (c, key) => {
  try { return verify(null, Buffer.from(canonical({ cabeza: c.cabeza, fecha: c.fecha, formato: 1, seq: c.seq }), 'utf8'), key, Buffer.from(c.firma, 'base64')) } catch { return false }
}

/** Every checkpoint file of the directories: a file that is not one is a usage error. */
function readCheckpointFiles (dirs) {
  const out = []
  for (const dir of dirs) {
    let names
    try { names = readdirSync(dir) } catch (err) { throw new UsageError(`cannot read the checkpoint directory ${dir}: ${err.message}`) }
    for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
      const file = join(dir, name)
      let c
      try { c = JSON.parse(readFileSync(file, 'utf8')) } catch { throw new UsageError(`${file} is not valid JSON: is it a checkpoint?`) }
      if (!wellFormed(c)) throw new UsageError(`${file} does not have the shape of a checkpoint {formato: 1, seq, cabeza, fecha, firma}`)
      out.push({ ...c, origen: file })
    }
  }
  return out
}

/** Decrypts a stored value ("v1:kid:iv:ct+tag", AAD = id NUL field) with whichever key has its id. */
function decryptor (keysB64) {
  const keys = new Map(keysB64.map((k) => Buffer.from(k.trim(), 'base64')).map((k) => [sha256hex(k).slice(0, 8), k]))
  for (const k of keys.values()) if (k.length !== 32) throw new UsageError('--clave-cifrado: each key is 32 bytes in base64 (ENCRYPTION_KEY and those of ENCRYPTION_KEYS, comma-separated)')
  return (stored, id, field) => {
    const [v, kid, iv, ct] = String(stored).split(':')
    const key = keys.get(kid)
    if (v !== 'v1' || key === undefined || ct === undefined) return undefined
    try {
      const data = Buffer.from(ct, 'base64')
      const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'))
      d.setAAD(Buffer.from(`${id}\u0000${field}`, 'utf8'))
      d.setAuthTag(data.subarray(data.length - 16))
      return Buffer.concat([d.update(data.subarray(0, data.length - 16)), d.final()]).toString('utf8')
    } catch { return undefined }
  }
}
const sha256hex = (buf) => createHash('sha256').update(buf).digest('hex')

/**
 * opt: { client (a connected pg client), dirs, publicKey, modules (parsed modules.yaml or undefined),
 *        encryptionKeys (array of base64) | undefined, indexKey (base64) | undefined, say (line printer) }
 */
export async function auditDatabase (opt) {
  const problems = []
  const problem = (text) => { problems.push(text); if (problems.length <= 50) opt.say(`  PROBLEM: ${text}`) }
  const key = publicKeyOf(opt.publicKey)
  const q = async (sql, params = []) => (await opt.client.query(sql, params)).rows

  // 1. Checkpoints: every file and every copy in the database must be signed by the service's key.
  const files = readCheckpointFiles(opt.dirs)
  if (files.length === 0) throw new UsageError(`no checkpoints (punto-*.json) in ${opt.dirs.join(', ')}: nothing outside the database to compare it with; pass the directory copied from CHECKPOINT_DIR`)
  const stored = (await q('select seq::text as seq, cabeza, fecha, firma from sys_puntos_control order by seq')).map((r) => ({ formato: 1, ...r, seq: Number(r.seq), origen: `sys_puntos_control seq ${r.seq}` }))
  const checkpoints = []
  for (const c of [...files, ...stored]) {
    if (signatureHolds(c, key)) checkpoints.push(c)
    else problem(`${c.origen}: the signature is not by the given public key (a forged checkpoint, or one of another database)`)
  }
  opt.say(`Checkpoints: ${files.length} files, ${stored.length} copies in the database.`)
  const wanted = new Map()
  for (const c of checkpoints) wanted.set(c.seq, [...(wanted.get(c.seq) ?? []), c])

  // 2. The chain: consecutive, every link recomputed, every entry recomputed from its history row.
  let seq = 0
  let link = GENESIS
  const linkAt = new Map([[0, GENESIS]])
  const sealed = new Map() // modulo/registro → newest sealed version
  for (;;) {
    const rows = await q(`select c.seq::text as seq, c.modulo, c.registro, c.version, c.entrada, c.enlace, h.id is not null as existe,
        h.accion, h.campos, ${FECHA} as fecha, h.hash, h.sello, h.usuario
      from sys_cadena c left join sys_historial h on h.modulo = c.modulo and h.registro = c.registro and h.version = c.version
      where c.seq > $1 order by c.seq limit 5000`, [seq])
    for (const r of rows) {
      const n = Number(r.seq)
      if (n !== seq + 1) problem(`the chain lacks entries ${seq + 1}…${n - 1} (deleted)`)
      link = sha(link + r.entrada)
      if (link !== r.enlace) problem(`entry ${n} (${r.registro} v${r.version}) does not link to the previous one (chain rewritten)`)
      if (!r.existe) problem(`${r.modulo} ${r.registro}: version ${r.version}, sealed in entry ${n}, is missing from the history (record rolled back or history truncated)`)
      else if (entryHash({ ...r }) !== r.entrada) problem(`${r.modulo} ${r.registro} v${r.version}: the history row (author, time, action, fields or hash) is not the one sealed in entry ${n}`)
      const k = `${r.modulo}/${r.registro}`
      sealed.set(k, Math.max(sealed.get(k) ?? 0, r.version))
      seq = n
      if (wanted.has(n)) linkAt.set(n, link)
    }
    if (rows.length < 5000) break
  }
  opt.say(`Global chain: ${seq} entries.`)
  for (const [n, cs] of wanted) {
    for (const c of cs) {
      if (n > seq) problem(`chain truncated: ${c.origen} (${c.fecha}) covers ${n} entries and the database holds only ${seq}`)
      else if (linkAt.get(n) !== c.cabeza) problem(`chain rewritten: link ${n} is not the head ${c.origen} (${c.fecha}) signed`)
    }
  }

  // 3. Each record: its history runs 1..n, its live row is version n, and n is not older than what the chain sealed.
  const history = await q(`select distinct on (modulo, registro) modulo, registro, version, hash, count(*) over (partition by modulo, registro) as n
    from sys_historial order by modulo, registro, version desc`)
  const last = new Map(history.map((r) => [`${r.modulo}/${r.registro}`, r]))
  for (const r of history) if (Number(r.n) !== r.version) problem(`${r.modulo} ${r.registro}: the history holds ${r.n} versions but reaches version ${r.version} (gaps)`)
  const mods = [...new Set([...history.map((r) => r.modulo), ...[...sealed.keys()].map((k) => k.split('/')[0])])]
  for (const m of mods) {
    const table = opt.modules?.modules?.[m]?.table ?? fold(m)
    let live
    try { live = await q(`select "_id", "_version", "_hash" from "${table.replace(/"/g, '""')}"`) } catch { problem(`table ${table} of module ${m} is missing`); continue }
    const byId = new Map(live.map((r) => [r._id, r]))
    for (const [k, v] of sealed) {
      const [mm, id] = k.split('/')
      if (mm !== m) continue
      const row = byId.get(id)
      if (row === undefined) problem(`${m} ${id}: the record is no longer in its table (the chain sealed up to its version ${v})`)
      else if (row._version < v) problem(`${m} ${id}: rolled back: the live row is version ${row._version} and the chain sealed up to version ${v}`)
    }
    for (const row of live) {
      const h = last.get(`${m}/${row._id}`)
      if (h === undefined || h.version !== row._version || h.hash !== row._hash) problem(`${m} ${row._id}: the live row (version ${row._version}) is not the newest version of its history (${h?.version ?? 'none'})`)
    }
  }

  // 4. The history's own author and time columns say what its snapshot says (also for rows not sealed yet).
  const cols = await q(`select modulo, registro, version from sys_historial
    where usuario is distinct from datos->>'_modified_by' or fecha is distinct from (datos->>'_modified')::timestamptz order by modulo, registro, version`)
  for (const r of cols) problem(`${r.modulo} ${r.registro} v${r.version}: the author or time of the history row are not those of its version`)
  const stray = await q(`select h.modulo, h.registro, h.version from sys_historial h
    where h.xid < coalesce((select marca from sys_cadena_estado where id = 1), '0'::xid8) and not exists (select 1 from sys_cadena c where c.historial = h.id)
    order by h.modulo, h.registro, h.version`)
  for (const r of stray) problem(`${r.modulo} ${r.registro} v${r.version}: out of the chain although its transaction ended before the last sealing (written by hand with an old xid)`)
  const [pending] = await q('select count(*)::int as n from sys_historial h where not exists (select 1 from sys_cadena c where c.historial = h.id)')
  if (pending.n > 0) opt.say(`${pending.n} history rows not sealed yet (newer than the last sealing: only their record's own chain covers them).`)

  // 5. Blind indexes, recomputed from the decrypted values.
  if (opt.encryptionKeys !== undefined && opt.indexKey !== undefined && opt.modules !== undefined) {
    const decrypt = decryptor(opt.encryptionKeys)
    const indexKey = Buffer.from(opt.indexKey, 'base64')
    if (indexKey.length !== 32) throw new UsageError('--clave-indice must be 32 bytes in base64: npm run integrity-key -- --indice')
    // One key per module and field: HKDF-SHA-256(index key, no salt, "indice-ciego:<module>.<field>", 32 bytes).
    const fieldKey = (m, name) => Buffer.from(hkdfSync('sha256', indexKey, Buffer.alloc(0), Buffer.from(`indice-ciego:${m}.${name}`, 'utf8'), 32))
    let checked = 0
    for (const [m, def] of Object.entries(opt.modules.modules ?? {})) {
      const fields = Object.entries(def.fields ?? {}).filter(([, f]) => f.encrypted && f.searchable)
      if (fields.length === 0) continue
      const table = def.table ?? fold(m)
      for (const [name, f] of fields) {
        const col = f.column ?? fold(name)
        const fieldHmacKey = fieldKey(m, name)
        const rows = await q(`select "_id", "${col}" as v, "${col}_bidx" as b from "${table}"`)
        for (const r of rows) {
          checked++
          const plain = r.v === null ? null : decrypt(r.v, r._id, name)
          if (r.v !== null && plain === undefined) { problem(`${m} ${r._id}: ${name} does not decrypt with the given keys (a key missing from --clave-cifrado, which takes ENCRYPTION_KEY and every key of ENCRYPTION_KEYS, or an altered value)`); continue }
          const expected = plain === null ? null : createHmac('sha256', fieldHmacKey).update(plain.trim().toUpperCase(), 'utf8').digest('hex')
          if ((r.b ?? null) !== expected) problem(`${m} ${r._id}: the blind index of ${name} does not match its value (copied from another record, or altered)`)
        }
      }
    }
    opt.say(`Blind indexes checked: ${checked}.`)
  } else {
    opt.say('Blind indexes not checked: that needs --clave-cifrado, --clave-indice and --modulos.')
  }
  if (problems.length > 50) opt.say(`  … and ${problems.length - 50} more problems.`)
  return problems
}
