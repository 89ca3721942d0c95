/**
 * The auditor's recomputation of every live row's _hash from its values
 * (docs/operator-guide.md "Tamper evidence"), for cadena-global.mjs: a field edited in SQL
 * in the live row, with its history untouched, is reported naming the
 * fields the history tells apart (editedFields). The payload is
 * verificar-cadena.mjs's `payloadOf` (the same as for one record's
 * history); the helpers (canonical JSON, SHA-256, column
 * names, decryption) are cadena-global.mjs's, passed in. Shares no code with
 * the service.
 */
import { createHmac } from 'node:crypto'

const isoSeconds = (v) => new Date(v).toISOString().replace(/\.\d{3}Z$/, 'Z')
const JSON_TYPES = new Set(['array', 'integer', 'decimal', 'boolean'])
const ENVELOPE = /^v1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*:[A-Za-z0-9+/]+=*$/

/**
 * A stored row (the live row or a history snapshot, keyed by column) as
 * payloadOf takes it: declared fields by name in API form, decrypted, and
 * the UTC instant of each datetime; `undecrypted` names the encrypted
 * fields it could not decrypt (no keys given, or a value that does not
 * decrypt with them).
 */
function recordOf (row, fields, decrypt, fold) {
  const r = { _id: row._id, _version: row._version, _created_by: row._created_by, _modified_by: row._modified_by }
  const at = {}
  for (const k of ['_created', '_modified', '_deleted']) if (row[k] != null) at[k] = isoSeconds(row[k])
  const undecrypted = []
  for (const [name, f] of Object.entries(fields)) {
    const col = (f.column ?? fold(name)) + (f.type === 'password' ? '_hash' : '')
    let v = row[col] ?? null
    if (v !== null && f.encrypted && f.type !== 'file') {
      const plain = decrypt === undefined ? undefined : decrypt(v, row._id, name)
      if (plain === undefined) { undecrypted.push(name); continue }
      try { v = JSON_TYPES.has(f.type) ? JSON.parse(plain) : plain } catch { undecrypted.push(name); continue }
    }
    if (Array.isArray(v) && f.items != null) {
      // A structured array: each encrypted sub-field's ciphertext bound to `<field>[<i>].<sub>`; plaintext stored before the declaration stays.
      let bad = false
      v = v.map((item, i) => item === null || typeof item !== 'object' || Array.isArray(item) ? item : Object.fromEntries(Object.entries(item).map(([k, x]) => {
        if (f.items[k]?.encrypted !== true || typeof x !== 'string' || !ENVELOPE.test(x)) return [k, x]
        const plain = decrypt === undefined ? undefined : decrypt(x, row._id, `${name}[${i}].${k}`)
        if (plain === undefined) { bad = true; return [k, x] }
        return [k, JSON_TYPES.has(f.items[k].type) ? JSON.parse(plain) : plain]
      })))
      if (bad) { undecrypted.push(name); continue }
    }
    if (v !== null && f.type === 'datetime') at[name] = isoSeconds(v)
    else if (v !== null && f.type === 'time') v = String(v).slice(0, 5)
    else if (v !== null && f.type === 'decimal') v = Number(v)
    r[name] = v
  }
  return { r, at, undecrypted }
}

/**
 * The fields of a live row edited behind the service's back, as far as the
 * history tells (docs/operator-guide.md "History and verification"). An
 * entry written before the history kept each version once holds the
 * version's own row: every payload entry that differs from it. A later one
 * holds only the row before (`anterior`; none for a create), and names in
 * `campos` the declared fields the version changed: a field that differs
 * from the row before but is not named, or is named but no longer differs,
 * was edited. A field the version changed and then edited again to
 * another value is not told apart (with no field named, the message says
 * only "edited"). `payloadOf(row)`: the row's payload in the live
 * version's seal format, undefined when it does not decrypt.
 */
function editedFields (entry, live, now, fields, payloadOf, canonical) {
  const differ = (was, names) => names.filter((k) => canonical(was[k] ?? null) !== canonical(now[k] ?? null))
  if (entry.datos !== null) {
    const was = payloadOf(entry.datos)
    return was === undefined ? [] : differ(was, [...new Set([...Object.keys(was), ...Object.keys(now)])]).sort()
  }
  if (entry.anterior === null && live._version !== 1) return [] // the row before is nowhere: reported by autoria.mjs
  const was = entry.anterior === null ? {} : payloadOf(entry.anterior)
  if (was === undefined) return []
  const named = new Set(entry.campos)
  return differ(was, Object.keys(fields)).filter((k) => !named.has(k))
    .concat([...named].filter((k) => fields[k] !== undefined && canonical(was[k] ?? null) === canonical(now[k] ?? null))).sort()
}

/** Recomputes every live row's _hash from its values, as /verificar does, a page at a time. */
export async function liveRows ({ q, opt, last, problem, decrypt, canonical, sha, fold, tableExists, UsageError }) {
  const integrity = opt.integrityKey === undefined ? undefined : Buffer.from(opt.integrityKey, 'base64')
  if (integrity !== undefined && integrity.length !== 32) throw new UsageError('--clave-integridad must be 32 bytes in base64: npm run integrity-key')
  const hmac = (name, plain) => createHmac('sha256', integrity).update(plain, 'utf8').digest('hex')
  let checked = 0
  let skipped = 0
  for (const [m, def] of Object.entries(opt.modules.modules ?? {})) {
    const fields = def?.fields ?? {}
    for (const [name, f] of Object.entries(fields)) {
      if (f === null || typeof f !== 'object' || typeof f.type !== 'string') throw new UsageError(`--modulos: field ${name} of module ${m} is not a field declaration ({type: …}); pass the modules.yaml in force`)
    }
    if (!await tableExists(q, def.table ?? fold(m))) continue // reported above, if it holds records
    const table = (def.table ?? fold(m)).replace(/"/g, '""')
    const hashOf = (row, h) => {
      const { r, at, undecrypted } = recordOf(row, fields, decrypt, fold)
      const sealedNulls = new Set(h.sello === 1 ? Object.entries(fields).filter(([n, f]) => (h.claves ?? []).includes((f.column ?? fold(n)) + (f.type === 'password' ? '_hash' : ''))).map(([n]) => n) : [])
      if (undecrypted.length > 0 || (integrity === undefined && (Number(h.sello) >= 3 || h.supresion != null || Object.entries(fields).some(([n, f]) => f.encrypted && f.type !== 'file' && r[n] != null)))) return { undecrypted }
      const payload = opt.payloadOf(r, fields, { prev: h.prev ?? '', sealedNulls, at, hmac, sello: Number(h.sello) })
      // An erasure's version seals its certificate, keyed (docs/operator-guide.md "Erasures").
      if (h.supresion != null) payload._supresion = hmac('_supresion', canonical(h.supresion))
      return { payload, hash: sha(canonical(payload)) }
    }
    let after = ''
    for (;;) {
      const rows = await q(`select to_jsonb(t) as j from "${table}" t where "_id" > $1 order by "_id" limit 2000`, [after])
      for (const { j } of rows) {
        const h = last.get(`${m}/${j._id}`)
        if (h === undefined || h.version !== j._version || h.hash !== j._hash) continue // reported above
        const got = hashOf(j, h)
        if (got.hash === undefined && decrypt !== undefined && got.undecrypted.length > 0) {
          problem(`${m} ${j._id}: ${got.undecrypted.join(', ')} does not decrypt with the given keys (a key missing from --clave-cifrado, or a value altered or copied from another record)`)
          continue
        }
        if (got.hash === undefined) { skipped++; continue }
        checked++
        if (got.hash === j._hash) continue
        const [entry] = await q('select datos, anterior, campos from sys_historial where modulo = $1 and registro = $2 and version = $3', [m, j._id, j._version])
        const changed = entry === undefined ? [] : editedFields(entry, j, got.payload, fields, (row) => hashOf(row, h).payload, canonical)
        problem(`${m} ${j._id}: the live row's values do not give its _hash (version ${j._version}): ${changed.length > 0 ? `field${changed.length > 1 ? 's' : ''} ${changed.join(', ')} edited` : 'edited'} behind the service's back`)
      }
      if (rows.length < 2000) break
      after = rows.at(-1).j._id
    }
  }
  opt.say(`Live rows recomputed: ${checked}${skipped > 0 ? `; ${skipped} not (encrypted values: pass --clave-cifrado and --clave-integridad)` : ''}.`)
}
