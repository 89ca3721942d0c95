#!/usr/bin/env node
/**
 * Independent verifier of a record's hash chain, from the API's output.
 * Written apart from the service (it shares no code with it) so an auditor
 * can check the documented algorithm (README, "Integrity"):
 *
 *   curl -H "Authorization: Bearer $T" $URL/denuncias/DEN-2026-00001/historial > h.json
 *   node deploy/auditoria/verificar-cadena.mjs h.json --modulo denuncias \
 *        [--modulos modules.yaml] [--tz Europe/Madrid] [--clave-integridad <base64>]
 *
 * Records with encrypted fields need the integrity key (npm run integrity-key)
 * and a history read by a user who may decrypt them. Each version is checked
 * under its own seal format (`sello`): 2 leaves out declared fields without a
 * value; 1 holds the fields named in `campos_sellados`, null included. A
 * history exported before `sello` existed is all format 1 with every field
 * of --modulos. Exit code 0 when every version checks, 1 when one does not,
 * 2 on a usage error.
 */
import { createHash, createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { parse as parseYaml } from 'yaml'

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: { modulo: { type: 'string' }, modulos: { type: 'string', default: 'modules.yaml' }, tz: { type: 'string', default: 'Europe/Madrid' }, 'clave-integridad': { type: 'string' } },
})
if (positionals.length !== 1 || opt.modulo === undefined) {
  console.error('uso: verificar-cadena.mjs <historial.json> --modulo <nombre> [--modulos modules.yaml] [--tz Europe/Madrid] [--clave-integridad <base64>]')
  process.exit(2)
}

// Canonical JSON: keys sorted (UTF-16 order) at every depth, no spaces.
const canonical = (v) => v === null || typeof v !== 'object'
  ? JSON.stringify(v ?? null)
  : Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
    : `{${Object.keys(v).filter((k) => v[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`

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

const registry = parseYaml(readFileSync(opt.modulos, 'utf8'))
const fields = registry.modules?.[opt.modulo]?.fields
if (fields === undefined) { console.error(`módulo desconocido: ${opt.modulo}`); process.exit(2) }
const key = opt['clave-integridad'] === undefined ? undefined : Buffer.from(opt['clave-integridad'], 'base64')
const input = JSON.parse(readFileSync(positionals[0], 'utf8'))
const versions = (input.data ?? input).versiones

let prev = ''
let ok = true
for (const v of versions) {
  const r = v.registro
  if (Array.isArray(r._restringidos) && r._restringidos.length > 0) {
    console.error(`la versión ${v._version} oculta campos cifrados (${r._restringidos.join(', ')}): lea el historial con un usuario que pueda descifrarlos`)
    process.exit(2)
  }
  // Every datetime may name two instants on the autumn fold: try each combination.
  const datetimeKeys = [...Object.entries(fields).filter(([, f]) => f.type === 'datetime').map(([k]) => k), '_created', '_modified', '_deleted']
    .filter((k) => typeof r[k] === 'string')
  // Fields that enter even when null: format 1's sealed fields (all declared ones for an export without `sello`).
  const sello = v.sello ?? 1
  if (sello !== 1 && sello !== 2) { console.error(`la versión ${v._version} tiene un formato de sello desconocido: ${sello}`); process.exit(2) }
  const sealedNulls = new Set(sello === 2 ? [] : v.campos_sellados ?? Object.keys(fields))
  const unknown = [...sealedNulls].filter((k) => fields[k] === undefined)
  if (unknown.length > 0) { console.error(`la versión ${v._version} se selló con campos que ${opt.modulos} no declara (${unknown.join(', ')}): use el modules.yaml actual`); process.exit(2) }
  let combos = [{}]
  for (const k of datetimeKeys) combos = combos.flatMap((c) => instants(r[k]).map((i) => ({ ...c, [k]: i })))
  const hashes = combos.map((dt) => {
    const payload = { _id: r._id, _version: r._version, _created_by: r._created_by, _modified_by: r._modified_by, _deleted: null, _prev: prev }
    for (const [name, f] of Object.entries(fields)) {
      if (f.type === 'password') { payload[name] = '(?)'; continue }
      let value = r[name] ?? null
      if (value === null && !sealedNulls.has(name)) continue
      if (f.encrypted && value !== null) {
        if (key === undefined) { console.error(`${name} está cifrado: hace falta --clave-integridad`); process.exit(2) }
        // An encrypted instant is digested as its UTC form, like a plain datetime in the payload.
        const plain = f.type === 'datetime' ? dt[name] : typeof value === 'string' ? value : canonical(value)
        value = createHmac('sha256', key).update(plain, 'utf8').digest('hex')
      } else if (f.type === 'datetime' && value !== null) value = dt[name]
      payload[name] = value
    }
    for (const k of ['_created', '_modified', '_deleted']) if (dt[k] !== undefined) payload[k] = dt[k]
    return createHash('sha256').update(canonical(payload), 'utf8').digest('hex')
  })
  const hasPassword = Object.values(fields).some((f) => f.type === 'password')
  const good = hasPassword ? undefined : hashes.includes(v._hash) && r._hash === v._hash
  if (good === false) ok = false
  console.log(`versión ${v._version} (${v.accion}, ${v.fecha}): ${good === undefined ? 'no verificable (contraseñas)' : good ? 'correcta' : 'NO COINCIDE'}`)
  prev = v._hash
}
console.log(ok ? 'Cadena íntegra.' : 'La cadena NO es íntegra.')
process.exit(ok ? 0 : 1)
