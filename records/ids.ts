/**
 * Draws record ids from the shared sequence store (docs/user-guide.md "Records"). When the store
 * does not know a counter (first record of the year, Redis flushed or
 * restarted) it is seeded from the highest id stored in the table, so an id
 * is never reused.
 */
import type { Db } from '../db/statement.js'
import type { ModuleDef } from '../core/registry/types.js'
import { formatId, sequenceKey } from '../core/ids.js'
import { yearIn } from '../core/time.js'
import { highestIdNumber } from '../db/record-ids.js'
import type { SequenceStore } from '../stores/sequences/contract.js'

export async function highestStored (em: Db, mod: ModuleDef, year: number): Promise<number> {
  return highestIdNumber(em, mod.table, `${mod.prefix}-${year}-`)
}

export async function drawId (em: Db, mod: ModuleDef, store: SequenceStore, timeZone: string, floor?: number): Promise<string> {
  return (await drawIds(em, mod, store, timeZone, 1, floor))[0]!
}

/** `count` consecutive ids in one draw (an import, docs/user-guide.md "Import (importar)"). */
export async function drawIds (em: Db, mod: ModuleDef, store: SequenceStore, timeZone: string, count: number, floor?: number): Promise<string[]> {
  const year = yearIn(new Date(), timeZone)
  const key = sequenceKey(mod.prefix, year)
  let n = floor === undefined ? await store.next(key, count) : null
  if (n === null) n = await store.seedAndNext(key, Math.max(floor ?? 0, await highestStored(em, mod, year)), count)
  const first = n
  return Array.from({ length: count }, (_, i) => formatId(mod.prefix, year, first + i))
}
