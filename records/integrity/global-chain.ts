/**
 * The global chain (docs/operator-guide.md "Tamper evidence: the global chain and checkpoints"): every history entry of
 * every record, in the order its transaction committed, each linked to the
 * one before, so that deleting or editing any sealed entry — a record rolled
 * back, the newest versions of the whole history truncated — changes every
 * later link, and the signed checkpoints of the head (checkpoints.ts) held
 * outside the database no longer match.
 *
 *   entry(e)  = SHA-256 of the canonical JSON of the history row's own
 *               columns {accion, campos, fecha, hash, modulo, registro,
 *               sello, usuario, version}; fecha as UTC
 *               `YYYY-MM-DDTHH:MM:SS.ffffffZ`
 *   link(0)   = 64 zeros
 *   link(n)   = SHA-256 of the text link(n-1) + entry(n)   (hex, lowercase)
 *
 * The write path does nothing new: a history row records the id of the
 * transaction that wrote it (xid8 column default). The sealer, one instance
 * at a time (an advisory lock), then reads the oldest transaction still
 * running (`xmin` of a snapshot taken once it holds the lock); every history
 * row whose transaction id lies below it has committed or is gone for good,
 * and stays so in every later snapshot, so those not yet sealed are appended
 * in (transaction id, row id) order and the watermark moves to `xmin`. No
 * write waits for the sealer, nor the sealer for a write. (READ COMMITTED on
 * purpose: a REPEATABLE READ snapshot would be taken by the statement that
 * waits for the lock, before the previous holder's entries are visible.)
 */
import type { Db } from '../../db/statement.js'
import { canonicalJson } from '../../core/canonical.js'
import { tryTransactionLock, waitForTransactionLock } from '../../db/advisory-lock.js'
import {
  appendChainEntries, chainStretch, chainTip, heldBack, moveSealWatermark, recordChainEntries, recordEntryColumns, sealWatermark,
  snapshotXmin, unsealedBelowWatermark, unsealedHistory, type EntryColumns,
} from '../../db/global-chain-statements.js'
import { inReadCommittedTransaction } from '../../db/transaction.js'
import { sha256 } from './version-hash.js'

export const GENESIS = '0'.repeat(64)

/** Advisory lock held by the instance that seals (any constant shared by all instances). */
const SEAL_LOCK = 720_093

/** Rows read per round trip while sealing. */
const BATCH = 2000

export function entryHash (e: EntryColumns): string {
  const { modulo, registro, version, accion, usuario, fecha, hash, campos, sello } = e
  return sha256(canonicalJson({ accion, campos, fecha, hash, modulo, registro, sello: Number(sello), usuario, version: Number(version) }))
}

export function linkHash (previous: string, entry: string): string {
  return sha256(previous + entry)
}

export interface ChainHead {
  seq: number
  enlace: string
}

export interface SealResult extends ChainHead {
  /** Entries appended by this run. */
  sealed: number
  /**
   * The database's transaction ids went below the watermark (it was
   * restored into another cluster): the whole history was looked at once.
   */
  rescanned: boolean
  /** Heads passed every `span` entries, for checkpoints.ts to anchor. */
  passed: ChainHead[]
  /** The head this run started from: every link after it is this run's. */
  desde: ChainHead
  /** History rows it could not take yet: their transaction, or an older one anywhere on the cluster, was still running. */
  behind: boolean
}

export async function chainHead (em: Db): Promise<ChainHead> {
  const row = await chainTip(em)
  return row === undefined ? { seq: 0, enlace: GENESIS } : { seq: Number(row.seq), enlace: row.enlace }
}

/**
 * Appends every history row that became stable since the last run.
 * `wait`: wait for another instance's run to end instead of skipping
 * (undefined is returned when skipped). `span`: report the head every
 * that many entries (anchors for checkpoints); `inside` runs in the same
 * transaction once the entries are in, before the watermark is committed.
 */
export async function seal (em: Db, opts: { wait: boolean, span: number, inside?: (tem: Db, result: SealResult) => Promise<void> }): Promise<SealResult | undefined> {
  return inReadCommittedTransaction(em.fork(), async (tem) => {
    if (opts.wait) await waitForTransactionLock(tem, SEAL_LOCK)
    else if (!await tryTransactionLock(tem, SEAL_LOCK)) return undefined
    const xmin = BigInt(await snapshotXmin(tem))
    const stored = BigInt(await sealWatermark(tem))
    let marca = stored
    const rescanned = xmin < marca
    if (rescanned) marca = 0n
    let { seq, enlace } = await chainHead(tem)
    const result: SealResult = { seq, enlace, sealed: 0, rescanned, passed: [], desde: { seq, enlace }, behind: false }
    let after: { xid: string, id: string } = { xid: marca.toString(), id: '0' }
    for (;;) {
      const rows = await unsealedHistory(tem, marca.toString(), xmin.toString(), after, BATCH)
      if (rows.length === 0) break
      const entries = rows.map((r) => {
        const entrada = entryHash(r)
        enlace = linkHash(enlace, entrada)
        seq++
        if (seq % opts.span === 0) result.passed.push({ seq, enlace })
        return { seq: String(seq), historial: r.id, modulo: r.modulo, registro: r.registro, version: r.version, entrada, enlace }
      })
      await appendChainEntries(tem, entries)
      result.sealed += entries.length
      // A short batch was the last: every row below xmin is in the snapshot already, none can join it.
      if (rows.length < BATCH) break
      after = { xid: rows.at(-1)!.xid, id: rows.at(-1)!.id }
    }
    if (xmin > stored || rescanned) await moveSealWatermark(tem, xmin.toString())
    result.behind = await heldBack(tem, xmin.toString())
    Object.assign(result, { seq, enlace })
    await opts.inside?.(tem, result)
    return result
  })
}

export interface ChainEntry {
  seq: number
  version: number
  entrada: string
  enlace: string
}

/** The chain entries of one record, in chain order. */
export async function entriesOf (em: Db, modulo: string, registro: string): Promise<ChainEntry[]> {
  const rows = await recordChainEntries(em, modulo, registro)
  return rows.map((r) => ({ seq: Number(r.seq), version: r.version, entrada: r.entrada, enlace: r.enlace }))
}

/** The entry columns of every history row of one record, by version. */
export async function historyColumnsOf (em: Db, modulo: string, registro: string): Promise<Map<number, EntryColumns>> {
  const rows = await recordEntryColumns(em, modulo, registro)
  return new Map(rows.map((r) => [r.version, r]))
}

/**
 * Where the links from `from` (exclusive, whose link is `start`) up to
 * `to` (inclusive; the tip when undefined) first fail to hold, or
 * undefined when they all hold. A missing seq fails too.
 */
export async function brokenLink (em: Db, from: ChainHead, to?: ChainHead): Promise<number | undefined> {
  let { seq, enlace } = from
  for (;;) {
    const rows = await chainStretch(em, seq, to?.seq, BATCH)
    for (const r of rows) {
      if (Number(r.seq) !== seq + 1) return seq + 1
      enlace = linkHash(enlace, r.entrada)
      if (enlace !== r.enlace) return seq + 1
      seq++
    }
    if (rows.length < BATCH) break
  }
  if (to !== undefined && (seq !== to.seq || enlace !== to.enlace)) return seq === to.seq ? to.seq : seq + 1
  return undefined
}

/**
 * Versions of one record that the chain should hold and does not: history
 * rows whose transaction ended before the last sealing run (below the
 * watermark) yet have no entry. The sealer leaves no such row behind (a
 * build before 2026-11-30 could: docs/operator-guide.md "Versions left
 * out of the chain"); one written in SQL with a back-dated transaction id
 * would be.
 */
export async function strayVersions (em: Db, modulo: string, registro: string): Promise<number[]> {
  return unsealedBelowWatermark(em, modulo, registro)
}
