/**
 * The auditor's check of evidence files (docs/operator-guide.md "History
 * and verification"), for verificar-cadena.mjs: each file a version names
 * is read from the files directory (FILES_DIR) and rehashed. A plain file
 * is at <dir>/<sha256[0:2]>/<sha256>; an encrypted one (id "cif-…") at
 * <dir>/<id[0:2]>/<id>, stored as "PRF1" keyId(8) iv(12) ciphertext tag(16),
 * AES-256-GCM with the additional data "archivo" NUL record NUL field NUL id;
 * it needs --clave-cifrado. Shares no code with the service.
 */
import { createDecipheriv, createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const isFile = (item) => item !== null && typeof item === 'object' && typeof item.sha256 === 'string' && typeof item.id === 'string'
const keyId = (k) => createHash('sha256').update(k).digest('hex').slice(0, 8)

/** The plaintext of a stored file, or a problem. */
function contents (dir, recordId, field, item, keys) {
  const encrypted = item.id.startsWith('cif-')
  const name = encrypted ? item.id : item.sha256
  let stored
  try { stored = readFileSync(join(dir, name.slice(0, 2), name)) } catch { return { problem: 'missing' } }
  if (!encrypted) return { bytes: stored }
  const key = keys.find((k) => keyId(k) === stored.subarray(4, 12).toString('ascii'))
  if (key === undefined) return { problem: 'no key (pass --clave-cifrado ENCRYPTION_KEY[,ENCRYPTION_KEYS])' }
  try {
    const d = createDecipheriv('aes-256-gcm', key, stored.subarray(12, 24))
    d.setAAD(Buffer.from(`archivo\u0000${recordId}\u0000${field}\u0000${item.id}`, 'utf8'))
    d.setAuthTag(stored.subarray(stored.length - 16))
    return { bytes: Buffer.concat([d.update(stored.subarray(24, stored.length - 16)), d.final()]) }
  } catch { return { problem: 'does not decrypt (altered or swapped)' } }
}

/** Problems of the files the versions name, each once: `[{ version, id, problem }]`. */
export function checkFiles (dir, recordId, fields, versions, keys) {
  const seen = new Set()
  const problems = []
  for (const v of versions) {
    for (const [name, f] of Object.entries(fields)) {
      if (f.type !== 'file' || !Array.isArray(v.registro[name])) continue
      for (const item of v.registro[name].filter(isFile)) {
        if (seen.has(item.id)) continue
        seen.add(item.id)
        const got = contents(dir, recordId, name, item, keys)
        const sha = got.bytes === undefined ? undefined : createHash('sha256').update(got.bytes).digest('hex')
        const problem = got.problem ?? (sha !== item.sha256 || got.bytes.length !== item.bytes ? 'SHA-256 or size differs (altered or swapped)' : undefined)
        if (problem !== undefined) problems.push({ version: v._version, id: item.id, problem })
      }
    }
  }
  return problems
}
