/**
 * Record views of a projection (`campos`, records/fields-query.ts): one
 * generated function per module, decryption right and field list, like the
 * full views (records/view-builder.ts), so a page of projected records
 * costs what a page of full ones does. Clients choose the lists, so each
 * module keeps at most PROJECTIONS of them, the least recently used
 * dropped first.
 */
import type { ModuleDef } from '../core/registry/types.js'
import type { FieldSelection } from './fields-query.js'
import { buildRecordView, type Decrypt, type RecordView } from './view-builder.js'

export const PROJECTIONS = 64

const cache = new WeakMap<ModuleDef, Map<string, RecordView>>()

export function projectedView (mod: ModuleDef, canDecrypt: boolean, fields: FieldSelection, decrypt: Decrypt): RecordView {
  let views = cache.get(mod)
  if (views === undefined) cache.set(mod, views = new Map())
  const key = `${canDecrypt ? 1 : 0}:${fields.key}`
  let view = views.get(key)
  if (view !== undefined) {
    // A Map keeps insertion order: re-inserting marks it the most recently used.
    views.delete(key)
  } else {
    view = buildRecordView(mod, canDecrypt, decrypt, fields.names)
    if (views.size >= PROJECTIONS) views.delete(views.keys().next().value!)
  }
  views.set(key, view)
  return view
}
