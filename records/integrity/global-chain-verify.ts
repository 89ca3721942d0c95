/**
 * What /verificar checks of one record against the global chain
 * (docs/operator-guide.md "Tamper evidence: the global chain and checkpoints"), once its own versions hold (chain.ts):
 *
 * - no checkpoint seen is forged;
 * - the chain reaches the newest checkpoint known and its link there is the
 *   checkpoint's head (the newest versions of the whole history were not
 *   deleted, nor the chain rewritten);
 * - no version of this record was left out of the chain although its
 *   transaction ended before the last sealing run (written in SQL with a
 *   back-dated transaction id, so that it would never be sealed);
 * - every entry of this record in the chain names a history row that still
 *   exists with the same columns (a record rolled back — newest history
 *   rows deleted, an older version copied into the live row — or a
 *   history row's author, time, action or changed fields edited);
 * - the links hold across the stretch of chain around each of its entries,
 *   from the stored checkpoint before it to the one after (or the tip), so
 *   its entries cannot have been replaced or removed without breaking a
 *   signed head.
 *
 * When all that holds but a checkpoint file newer than every readable one
 * could not be read (empty, cut short: an outage of the store), the answer
 * is `valido: true` with motivo ILEGIBLE, never a forgery.
 */
import type { Db } from '../../db/statement.js'
import { MOTIVOS } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { linkAt } from '../../db/global-chain-statements.js'
import type { Row } from '../../db/module-entity.js'
import type { Checkpoints } from './checkpoints.js'
import type { Verdict } from './chain.js'
import { brokenLink, entriesOf, entryHash, GENESIS, historyColumnsOf, strayVersions } from './global-chain.js'

const broken = (motivo: keyof typeof MOTIVOS, version?: number): Verdict =>
  ({ valido: false, ...(version !== undefined && { version_rota: version }), motivo: MOTIVOS[motivo] })

/** Nothing found: undefined, or the warning that a checkpoint file could not be read. */
const intact = (checkpoints: Checkpoints): Verdict | undefined =>
  checkpoints.unreadable() === undefined ? undefined : { valido: true, motivo: MOTIVOS.ILEGIBLE }

export async function verifyInGlobalChain (em: Db, mod: ModuleDef, live: Row, checkpoints: Checkpoints): Promise<Verdict | undefined> {
  const latest = await checkpoints.latest(em)
  if (checkpoints.problem() !== undefined) return broken('FIRMA')
  if (latest !== undefined && latest.seq > 0) {
    const enlace = await linkAt(em, latest.seq)
    if (enlace === undefined) return broken('TRUNCADA')
    if (enlace !== latest.cabeza) return broken('REESCRITA')
  }
  const id = live._id as string
  const stray = await strayVersions(em, mod.name, id)
  if (stray.length > 0) return broken('FUERA', stray[0])
  const entries = await entriesOf(em, mod.name, id)
  if (entries.length === 0) return intact(checkpoints)
  const columns = await historyColumnsOf(em, mod.name, id)
  for (const e of entries) {
    const c = columns.get(e.version)
    if (c === undefined || e.version > (live._version as number)) return broken('RETROCESO', e.version)
    if (entryHash(c) !== e.entrada) return broken('ENTRADA', e.version)
  }
  let covered = 0
  for (const e of entries) {
    if (e.seq <= covered) continue
    const { before, after } = await checkpoints.around(em, e.seq)
    if (checkpoints.problem() !== undefined) return broken('FIRMA')
    const from = before === undefined ? { seq: 0, enlace: GENESIS } : { seq: before.seq, enlace: before.cabeza }
    const at = await brokenLink(em, from, after === undefined ? undefined : { seq: after.seq, enlace: after.cabeza })
    if (at !== undefined) return broken('ENLACE', e.version)
    covered = after?.seq ?? Number.POSITIVE_INFINITY
  }
  return intact(checkpoints)
}
