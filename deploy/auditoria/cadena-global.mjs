/**
 * The auditor's check of a whole database against the signed checkpoints of
 * its global chain (docs/operator-guide.md, "Integrity"), for verificar-cadena.mjs --db.
 * Shares no code with the service: everything here follows docs/operator-guide.md.
 *
 *   entry  = SHA-256 hex of the canonical JSON of {accion, campos, fecha,
 *            hash, modulo, registro, sello, usuario, version} of a
 *            sys_historial row, fecha as UTC YYYY-MM-DDTHH:MM:SS.ffffffZ
 *   link 0 = 64 zeros; link n = SHA-256 hex of (link n-1 + entry n)
 *   checkpoint = {formato: 2, cadena, seq, cabeza, fecha, firma}: firma is
 *            the Ed25519 signature of the canonical JSON of the other five
 *            (format 1, written before chains had an identity: no cadena)
 *   blind index = hex HMAC-SHA-256(field key, trimmed upper-case value),
 *            field key = HKDF-SHA-256(index key, empty salt,
 *            "indice-ciego:<module>.<field>", 32 bytes)
 *
 * Every query runs in one REPEATABLE READ READ ONLY transaction, one
 * snapshot of the database, taken after the checkpoint files are read
 * (each file was written after the chain it signs was committed), so an
 * audit during normal writes sees a consistent database. Checkpoint files
 * of another chain (another `cadena` than sys_cadena_estado's) are left
 * out, unreadable ones (empty, cut short) listed apart: neither is a sign
 * of tampering.
 *
 * Returns {problems (integrity failures), unreadable (files that are not
 * checkpoints)}; throws a UsageError for input it cannot work with.
 */
import { createDecipheriv, createHash, createHmac, createPublicKey, hkdfSync, verify } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { liveRows } from './filas-vivas.mjs'
import { authorsInHistory, authorsInLive } from './autoria.mjs'

export class UsageError extends Error {}

export const canonical = (v) => v === null || typeof v !== 'object'
  ? JSON.stringify(v ?? null)
  : Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
    : `{${Object.keys(v).filter((k) => v[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
const sha = (s) => createHash('sha256').update(s, 'utf8').digest('hex')
const GENESIS = '0'.repeat(64)
const FECHA = `to_char(h.fecha at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
const fold = (name) => name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-zA-Z0-9_]/g, '_').toLowerCase()

export const entryHash = (h) => sha(canonical({ accion: h.accion, campos: h.campos, fecha: h.fecha, hash: h.hash, modulo: h.modulo, registro: h.registro, sello: Number(h.sello), usuario: h.usuario, version: Number(h.version) }))

function publicKeyOf (b64) {
  const raw = Buffer.from(b64 ?? '', 'base64')
  if (raw.length !== 32) throw new UsageError('--clave-publica must be the Ed25519 public key in base64 (32 bytes): npm run integrity-key -- --publica')
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
}

const wellFormed = (c) => c !== null && typeof c === 'object' && (c.formato === 1 ? c.cadena === undefined : c.formato === 2 && typeof c.cadena === 'string' && /^[0-9a-f]{32}$/.test(c.cadena)) &&
  Number.isSafeInteger(c.seq) && c.seq >= 0 && typeof c.cabeza === 'string' && /^[0-9a-f]{64}$/.test(c.cabeza) && typeof c.fecha === 'string' && typeof c.firma === 'string'
const signatureHolds = (c, key) => {
  const signed = c.formato === 1 ? { cabeza: c.cabeza, fecha: c.fecha, formato: 1, seq: c.seq } : { cabeza: c.cabeza, cadena: c.cadena, fecha: c.fecha, formato: 2, seq: c.seq }
  try { return verify(null, Buffer.from(canonical(signed), 'utf8'), key, Buffer.from(c.firma, 'base64')) } catch { return false }
}

/** The text of every .json file of the directories (hidden temporary files are not checkpoints). */
function readCheckpointFiles (dirs) {
  const out = []
  for (const dir of dirs) {
    let names
    try { names = readdirSync(dir) } catch (err) { throw new UsageError(`cannot read the checkpoint directory ${dir}: ${err.message}`) }
    for (const name of names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort()) {
      const file = join(dir, name)
      try { out.push({ file, text: readFileSync(file, 'utf8') }) } catch (err) { out.push({ file, unreadable: `cannot be read: ${err.message}` }) }
    }
  }
  return out
}

/** Parses each file: a checkpoint, or why it is not one (empty, cut short, not JSON, the wrong shape). */
function parseCheckpointFiles (files) {
  const checkpoints = []
  const unreadable = []
  for (const f of files) {
    if (f.unreadable !== undefined) { unreadable.push(f); continue }
    let c
    try { c = JSON.parse(f.text) } catch {
      unreadable.push({ file: f.file, unreadable: f.text.trim() === '' ? 'is empty' : 'is not valid JSON (cut short?)' })
      continue
    }
    if (!wellFormed(c)) unreadable.push({ file: f.file, unreadable: 'does not have the shape of a checkpoint {formato, cadena, seq, cabeza, fecha, firma}' })
    else checkpoints.push({ ...c, origen: f.file })
  }
  return { checkpoints, unreadable }
}

/**
 * Runs `fn` with every query in one snapshot, read only. The service's
 * writes go on; the audit sees the database as of one instant.
 */
async function inSnapshot (client, fn) {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
  try {
    return await fn()
  } finally {
    await client.query('ROLLBACK').catch(() => {})
  }
}

/** Whether a table exists (a module whose table was never made, or dropped). */
export async function tableExists (q, table) {
  return (await q('select to_regclass($1) is not null as ok', [`"${table.replace(/"/g, '""')}"`]))[0].ok
}

/** Whether a table has a column (older schemas lack the chain identity). */
async function hasColumn (q, table, column) {
  return (await q('select 1 from information_schema.columns where table_schema = current_schema() and table_name = $1 and column_name = $2', [table, column])).length > 0
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
 *        encryptionKeys (array of base64) | undefined, indexKey (base64) | undefined, integrityKey (base64) | undefined,
 *        payloadOf (verificar-cadena.mjs: what enters a _hash), say (line printer) }
 */
export async function auditDatabase (opt) {
  const key = publicKeyOf(opt.publicKey)
  // The files first, then the snapshot: every file read signs a chain already committed.
  const files = parseCheckpointFiles(readCheckpointFiles(opt.dirs))
  return inSnapshot(opt.client, () => audit(opt, key, files))
}

async function audit (opt, key, files) {
  const problems = []
  const problem = (text) => { problems.push(text); if (problems.length <= 50) opt.say(`  PROBLEM: ${text}`) }
  const q = async (sql, params = []) => (await opt.client.query(sql, params)).rows

  // 1. Checkpoints: every file of this chain and every copy in the database must be signed by the service's key.
  const identity = await hasColumn(q, 'sys_cadena_estado', 'cadena')
  const [estado] = identity ? await q('select cadena from sys_cadena_estado where id = 1') : []
  // A database older than chain identities: its chain is that of the files its key signed.
  const cadena = estado?.cadena ?? files.checkpoints.find((c) => c.formato === 2 && signatureHolds(c, key))?.cadena
  const mine = []
  for (const c of files.checkpoints) {
    if (c.formato === 2 && c.cadena !== cadena) opt.say(`  Left out: ${c.origen} is a checkpoint of another chain (${c.cadena}; this database's is ${cadena ?? 'unknown'}).`)
    else mine.push(c)
  }
  if (mine.length === 0) {
    throw new UsageError(`no checkpoints of this database's chain (punto-*.json) in ${opt.dirs.join(', ')}: nothing outside the database to compare it with; pass the directory copied from CHECKPOINT_DIR` +
      (files.unreadable.length > 0 ? ` (${files.unreadable.length} files there could not be read)` : ''))
  }
  const stored = (await q(`select seq::text as seq, cabeza, fecha, firma${await hasColumn(q, 'sys_puntos_control', 'cadena') ? ', cadena' : ''} from sys_puntos_control order by seq`))
    .map((r) => ({ formato: r.cadena == null ? 1 : 2, ...r, ...(r.cadena == null && { cadena: undefined }), seq: Number(r.seq), origen: `sys_puntos_control seq ${r.seq}` }))
  const checkpoints = []
  for (const c of [...mine, ...stored]) {
    if (signatureHolds(c, key) && (c.formato === 1 || c.cadena === cadena)) checkpoints.push(c)
    else if (c.formato === 1) problem(`${c.origen}: the signature is not by the given public key (a forged checkpoint, or another deployment's written before chains had an identity)`)
    else problem(`${c.origen}: the signature is not by the given public key (a forged checkpoint)`)
  }
  opt.say(`Checkpoints: ${files.checkpoints.length} files (${mine.length} of this chain${cadena === undefined ? '' : `, ${cadena}`}), ${stored.length} copies in the database` +
    `${files.unreadable.length > 0 ? `, ${files.unreadable.length} unreadable files` : ''}.`)
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
  // `claves`: the columns of a format-1 version's row. Only entries written before the history kept each version once
  // are format 1, and those hold their row in `datos`; the newest entry has no next one whose `anterior` could hold it.
  const history = await q(`select distinct on (modulo, registro) modulo, registro, version, hash, sello, supresion, count(*) over (partition by modulo, registro) as n,
      lag(hash) over (partition by modulo, registro order by version) as prev,
      case when sello = 1 then (select array_agg(k) from jsonb_object_keys(datos) k) end as claves
    from sys_historial order by modulo, registro, version desc`)
  // Also each entry's author and time against its version's row (also for entries not sealed yet): in the history here, in the live rows below (autoria.mjs).
  await authorsInHistory(q, problem)
  const last = new Map(history.map((r) => [`${r.modulo}/${r.registro}`, r]))
  for (const r of history) if (Number(r.n) !== r.version) problem(`${r.modulo} ${r.registro}: the history holds ${r.n} versions but reaches version ${r.version} (gaps)`)
  const mods = [...new Set([...history.map((r) => r.modulo), ...[...sealed.keys()].map((k) => k.split('/')[0])])]
  for (const m of mods) {
    const table = opt.modules?.modules?.[m]?.table ?? fold(m)
    // Asked first: inside the snapshot's transaction a failed query would end every later one.
    if (!await tableExists(q, table)) { problem(`table ${table} of module ${m} is missing`); continue }
    await authorsInLive(q, m, table, problem)
    const live = await q(`select "_id", "_version", "_hash" from "${table.replace(/"/g, '""')}"`)
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

  // 3b. Each live row's _hash recomputed from its values (a field edited in SQL, history untouched).
  if (opt.modules !== undefined && opt.payloadOf !== undefined) {
    const decrypt = opt.encryptionKeys === undefined ? undefined : decryptor(opt.encryptionKeys)
    await liveRows({ q, opt, last, problem, decrypt, canonical, sha, fold, tableExists, UsageError })
  }
  else opt.say('Live rows not recomputed: that needs --modulos.')

  // 4. History rows kept out of the chain, and those not sealed yet.
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
      if (!await tableExists(q, table)) continue // a module declared but never started: no records
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
  return { problems, unreadable: files.unreadable }
}
