/**
 * buildRecordView (records/view-builder.ts) alone: for every module of
 * modules.yaml and any stored row, the generated view is the record the
 * field-by-field definition gives (below, the loop it replaced): the same
 * keys in the same order, values shown by their types, instants in the
 * service zone, encrypted fields decrypted or withheld in `_restringidos`,
 * write-only fields never.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { createFieldCipher, type FieldCipher } from '../../core/crypto.js'
import { loadRegistry } from '../../core/registry/load.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { SYSTEM_FIELDS } from '../../core/system-fields.js'
import { FIELD_TYPES_IMPL, typeOf, type FieldTypeImpl } from '../../core/field-types/index.js'
import { formatDateTime } from '../../core/time.js'
import { valueColumn } from '../../db/columns.js'
import type { Row } from '../../db/module-entity.js'
import { toApiRecord } from '../../records/record-view.js'
import { selectable, selectionOf } from '../../records/fields-query.js'
import { PROJECTIONS } from '../../records/projected-views.js'

const registry = loadRegistry('modules.yaml')
const cipher = createFieldCipher([Buffer.alloc(32, 7)], { indexKey: Buffer.alloc(32, 8), integrityKey: Buffer.alloc(32, 9) })
const TZ = 'Europe/Madrid'

function decrypt (f: FieldDef, row: Row, c: FieldCipher): unknown {
  const stored = row[valueColumn(f)]
  return stored === null || stored === undefined ? null : typeOf(f).fromPlaintext(c.decrypt(stored as string, row._id as string, f.name))
}

/** The definition: system fields that lead, declared fields in order, system fields that trail, then what was withheld. */
function reference (mod: ModuleDef, row: Row, canDecrypt: boolean): Record<string, unknown> {
  const local = (d: Date): string => formatDateTime(d, TZ)
  const shown = (type: FieldTypeImpl, v: unknown): unknown => v === null || v === undefined ? null : type.view(v, local)
  const out: Record<string, unknown> = {}
  for (const s of SYSTEM_FIELDS.filter((x) => x.leads)) out[s.name] = shown(FIELD_TYPES_IMPL[s.type], row[s.name])
  const restricted: string[] = []
  for (const f of mod.fields) {
    if (typeOf(f).writeOnly) continue
    if (f.encrypted) {
      if (canDecrypt) out[f.name] = shown(typeOf(f), decrypt(f, row, cipher))
      else restricted.push(f.name)
    } else if (f.items?.some((x) => x.encrypted) === true) {
      // A structured array (docs/user-guide.md "Structured arrays"): encrypted sub-fields decrypted in each item, or removed and named by path.
      const secret = f.items.filter((x) => x.encrypted).map((x) => x.name)
      const items = row[valueColumn(f)] as unknown[] | null
      out[f.name] = items === null ? null : items.map((item, i) => typeof item !== 'object' || item === null ? item : Object.fromEntries(Object.entries(item)
        .filter(([k]) => canDecrypt || !secret.includes(k))
        .map(([k, v]) => [k, secret.includes(k) && typeof v === 'string' && v.startsWith('v1:') ? cipher.decrypt(v, row._id as string, `${f.name}[${i}].${k}`) : v])))
      if (!canDecrypt) restricted.push(...secret.map((k) => `${f.name}.${k}`))
    } else {
      out[f.name] = shown(typeOf(f), row[valueColumn(f)])
    }
  }
  for (const s of SYSTEM_FIELDS.filter((x) => !x.leads)) out[s.name] = shown(FIELD_TYPES_IMPL[s.type], row[s.name])
  if (restricted.length > 0) out._restringidos = restricted
  return out
}

const instant = fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59) }).map((ms) => new Date(ms))
/** A stored value of each type, as rows come back from the database (or as history snapshots hold them). */
const stored: Record<string, fc.Arbitrary<unknown>> = {
  string: fc.string(), text: fc.string(), ref: fc.string(), password: fc.string(),
  integer: fc.integer(), decimal: fc.constantFrom('12.50', '0.00', '-3.1'), boolean: fc.boolean(),
  date: fc.constantFrom('2026-01-31', '1000-01-01'), time: fc.constantFrom('08:30:00', '23:59:59'),
  datetime: fc.oneof(instant, instant.map((d) => d.toISOString())),
  array: fc.array(fc.string(), { maxLength: 3 }),
  // URL strings of old and stored files (docs/user-guide.md "Evidence files").
  file: fc.array(fc.oneof(fc.string(), fc.record({
    id: fc.uuid(), nombre: fc.string(), tipo: fc.constant('image/png'), bytes: fc.nat(), sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
    subido: instant.map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z')), subido_por: fc.string(),
  })), { maxLength: 3 }),
}

/** Stored items of a structured array: objects whose encrypted sub-fields are ciphertexts or (stored before the declaration) plaintext, and texts. */
function itemsOf (f: FieldDef): fc.Arbitrary<unknown[]> {
  const item = fc.record(Object.fromEntries(f.items!.map((s) => [s.name, fc.tuple(fc.string(), fc.boolean())])), { requiredKeys: [] })
  return fc.array(fc.oneof(fc.string(), item), { maxLength: 3 }).map((items) => items.map((it, i) => typeof it === 'string' ? it : Object.fromEntries(Object.entries(it as Record<string, [string, boolean]>).map(([k, [v, sealed]]) =>
    [k, sealed && f.items!.find((s) => s.name === k)!.encrypted ? cipher.encrypt(v, 'REG-2026-00001', `${f.name}[${i}].${k}`) : v]))))
}

function rowOf (mod: ModuleDef): fc.Arbitrary<Row> {
  const columns: Record<string, fc.Arbitrary<unknown>> = {
    _id: fc.constant('REG-2026-00001'), _created: instant, _created_by: fc.constant('USR-2026-00001'), _modified: instant,
    _modified_by: fc.constant('USR-2026-00002'), _version: fc.nat(), _hash: fc.constant('0'.repeat(64)), _deleted: fc.option(instant, { nil: null }),
  }
  for (const f of mod.fields) {
    const value = fc.option(f.items === undefined ? stored[f.type]! : itemsOf(f), { nil: null })
    columns[valueColumn(f)] = f.encrypted
      ? value.map((v) => v === null ? null : cipher.encrypt(typeOf(f).toPlaintext(v instanceof Date || typeof v !== 'string' || f.type !== 'datetime' ? v : new Date(v)), 'REG-2026-00001', f.name))
      : value
  }
  return fc.record(columns) as fc.Arbitrary<Row>
}

describe('buildRecordView', () => {
  for (const mod of registry.modules) {
    it(`${mod.name}: the generated view is the record the definition gives, with and without descifrar`, () => {
      fc.assert(fc.property(rowOf(mod), fc.boolean(), (row, canDecrypt) => {
        const view = toApiRecord(mod, row, { timeZone: TZ, cipher, canDecrypt })
        const expected = reference(mod, row, canDecrypt)
        expect(Object.keys(view)).toEqual(Object.keys(expected))
        expect(view).toEqual(expected)
      }), { numRuns: 60 })
    })
  }
})

describe('a projection (campos, records/fields-query.ts)', () => {
  for (const mod of registry.modules) {
    it(`${mod.name}: _id and the named fields of the full view, in its order; _restringidos names only the named fields withheld`, () => {
      const names = selectable(mod)
      fc.assert(fc.property(rowOf(mod), fc.boolean(), fc.subarray(names), (row, canDecrypt, named) => {
        const fields = selectionOf(mod, named)
        const view = toApiRecord(mod, row, { timeZone: TZ, cipher, canDecrypt }, fields)
        const full = reference(mod, row, canDecrypt)
        const expected: Record<string, unknown> = Object.fromEntries(Object.entries(full).filter(([k]) => k === '_id' || named.includes(k)))
        // A structured array's withheld sub-fields are named by their path (`testigos.dni`).
        const withheld = ((full._restringidos ?? []) as string[]).filter((n) => named.includes(n.split('.')[0]!))
        if (withheld.length > 0) expected._restringidos = withheld
        expect(Object.keys(view)).toEqual(Object.keys(expected))
        expect(view).toEqual(expected)
      }), { numRuns: 60 })
    })
  }

  it(`stays right past the ${PROJECTIONS} generated views it keeps per module`, () => {
    const mod = registry.byName.get('personal')!
    const names = selectable(mod)
    const row = fc.sample(rowOf(mod), { numRuns: 1, seed: 1 })[0]!
    // Every pair of fields: more lists than the cache holds, each asked twice.
    const lists = names.flatMap((a, i) => names.slice(i + 1).map((b) => [a, b]))
    expect(lists.length).toBeGreaterThan(PROJECTIONS)
    for (const list of [...lists, ...lists]) {
      const view = toApiRecord(mod, row, { timeZone: TZ, cipher, canDecrypt: true }, selectionOf(mod, list))
      expect(Object.keys(view)).toEqual(['_id', ...list.filter((n) => n !== '_id')])
    }
  })
})
