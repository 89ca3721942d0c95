/**
 * Signed checkpoints of the global chain's head (docs/operator-guide.md
 * "Tamper evidence"): evidence, outside the database, of how long the chain
 * was and what its last link was (checkpoint-format.ts). The private key's
 * seed is the `firma` system key (sys_claves, wrapped by ENCRYPTION_KEY), so
 * write access to the database does not give it; the public key (`npm run
 * integrity-key -- --publica`) is all an auditor needs to check one.
 *
 * Each run of the sealer (global-chain.ts) stores a signed checkpoint in
 * `sys_puntos_control` every ANCHOR_SPAN entries and at its new head: those
 * bound the stretch of chain /verificar recomputes around a record. The
 * newest head is *published*: one new file in CHECKPOINT_DIR, written
 * atomically (checkpoint-store.ts), and one log line. A write that fails
 * (a full or read-only volume) is an outage of the store, not tampering: it
 * is logged and counted, and the next round publishes again. The instance
 * remembers the newest checkpoint of its chain it published or read (from
 * the directory, or from the database, signature checked), which is what
 * truncation is measured against; another chain's files and unreadable
 * ones are told apart from forgeries.
 */
import type { Db } from '../../db/statement.js'
import { MOTIVOS, REASONS } from '../../core/errors.js'
import {
  newestStoredCheckpoint, storeCheckpoints, storedCheckpointBefore, storedCheckpointFrom, type StoredCheckpoint,
} from '../../db/checkpoint-statements.js'
import { linkAt } from '../../db/global-chain-statements.js'
import { classify, type Checkpoint, type Signer } from './checkpoint-format.js'
import { CheckpointStore } from './checkpoint-store.js'
import { brokenLink, chainHead, seal, type ChainHead, type SealResult } from './global-chain.js'

export type { Checkpoint, Signer } from './checkpoint-format.js'

/** A signed checkpoint is stored in the database every this many entries. */
export const ANCHOR_SPAN = 1000

const fromRow = (r: StoredCheckpoint): Checkpoint => ({
  formato: r.cadena === null ? 1 : 2, ...(r.cadena !== null && { cadena: r.cadena }), seq: Number(r.seq), cabeza: r.cabeza, fecha: r.fecha, firma: r.firma,
})

export interface CheckpointsOptions {
  signer: Signer
  /** This database's chain identity (chain-identity.ts). */
  cadena: string
  /** CHECKPOINT_DIR. */
  dir: string
  /** Told of every checkpoint signed (the log line, also a place it is published). */
  onPublish (cp: Checkpoint, file: string | undefined): void
  /** Told when the directory cannot be read or written, or holds a file that is not one of this chain's checkpoints. */
  onProblem (message: string, err?: unknown): void
}

export interface RunResult {
  checkpoint?: Checkpoint
  sealed?: SealResult
  refused?: keyof typeof MOTIVOS
  /** Why the checkpoint signed could not be written to CHECKPOINT_DIR (it is stored in the database and logged). */
  unpublished?: string
}

/** A file of the store that is another chain's checkpoint. */
export interface ForeignFile { file: string, cadena: string | undefined }

/** The checkpoints of one instance: sealing, publishing, and what it knows. */
export class Checkpoints {
  private newest: Checkpoint | undefined
  /** A published checkpoint whose signature does not hold (tampering), kept until the process ends. */
  private forged: string | undefined
  /** An unreadable file newer than the newest readable checkpoint, as of the last read of the directory. */
  private illegible: string | undefined
  /** Files already reported (a report per file, not per round). */
  private readonly told = new Set<string>()
  /** The last write to the store failed: the next round publishes again even if the head did not move. */
  private unpublished = false
  private readonly store: CheckpointStore
  /** Checkpoint files that could not be written, since start. */
  failures = 0
  /** Told of each periodic or on-demand run that appended entries (the event feed wakes its readers, records/events/feed-hub.ts; its own `sealNow` runs it tells itself). */
  onSealed: ((result: SealResult) => void) | undefined

  constructor (private readonly opts: CheckpointsOptions) {
    this.store = new CheckpointStore(opts.dir)
  }

  get signer (): Signer { return this.opts.signer }

  get cadena (): string { return this.opts.cadena }

  /** What makes every verification fail: a forged checkpoint seen anywhere. */
  problem (): string | undefined { return this.forged }

  /** An unreadable checkpoint file newer than every readable one (an outage of the store, not tampering). */
  unreadable (): string | undefined { return this.illegible }

  private know (cp: Checkpoint): void {
    if (this.newest === undefined || cp.seq > this.newest.seq) this.newest = cp
  }

  private reject (where: string): void {
    this.forged ??= where
    this.opts.onProblem(`${where} is not signed by this service's checkpoint key: the checkpoint store or sys_claves was tampered with (compare with npm run integrity-key -- --publica)`)
  }

  private tell (file: string, message: string): void {
    if (this.told.has(file)) return
    this.told.add(file)
    this.opts.onProblem(message)
  }

  /** What one file of the store is, for this chain; a file that cannot be read is unreadable. */
  private look (name: string): ReturnType<typeof classify> | undefined {
    let text: string
    try { text = this.store.read(name) } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined // compacted meanwhile
      return { kind: 'ilegible', why: `cannot be read: ${(err as Error).message}` }
    }
    return classify(text, this.opts.signer, this.opts.cadena)
  }

  /**
   * Reads CHECKPOINT_DIR newest first down to this chain's newest
   * checkpoint, into what this instance knows. Unreadable files and another
   * chain's on the way are reported (once each) and passed over.
   */
  readDirectory (): void {
    let names: string[]
    try {
      names = this.store.names()
    } catch (err) {
      this.opts.onProblem(`cannot read CHECKPOINT_DIR ${this.opts.dir}; make it readable by the service`, err)
      return
    }
    let illegible: string | undefined
    for (const name of names) {
      const file = this.store.path(name)
      const c = this.look(name)
      if (c === undefined) continue
      if (c.kind === 'propio') { this.know(c.cp); break }
      if (c.kind === 'falso') { this.reject(`checkpoint file ${file}`); break }
      if (c.kind === 'ajeno') {
        this.tell(file, `checkpoint file ${file} belongs to another chain (${c.cadena ?? 'format 1, not signed by this key'}; this database's is ${this.opts.cadena}): ignored; give each deployment a CHECKPOINT_DIR of its own`)
        continue
      }
      illegible ??= file
      this.tell(file, `checkpoint file ${file} is unreadable (${c.why}): a write cut short or a damaged store, not a forgery; verification uses the readable checkpoints. Restore it from a copy, or move it out of CHECKPOINT_DIR`)
    }
    this.illegible = illegible
  }

  /** Every file of the store that is another chain's checkpoint (the start refuses such a store). */
  foreignFiles (): ForeignFile[] {
    const out: ForeignFile[] = []
    for (const name of this.store.names()) {
      const c = this.look(name)
      if (c?.kind === 'ajeno') out.push({ file: this.store.path(name), cadena: c.cadena })
    }
    return out
  }

  /** Removes superseded files of this chain (checkpoint-store.ts); returns how many. */
  compact (now = Date.now()): number {
    return this.store.compact(now, (name) => this.look(name)?.kind === 'propio')
  }

  /** The newest checkpoint known: this instance's own, the directory's, or the database's (signature checked). */
  async latest (em: Db): Promise<Checkpoint | undefined> {
    const row = await newestStoredCheckpoint(em)
    if (row !== undefined) {
      const cp = fromRow(row)
      if (this.ours(cp)) this.know(cp)
      else this.reject(`the checkpoint at seq ${row.seq} in table sys_puntos_control`)
    }
    return this.newest
  }

  /**
   * The nearest stored checkpoints strictly before `seq` and at or after
   * it; a stored one with a bad signature counts as tampering.
   */
  async around (em: Db, seq: number): Promise<{ before?: Checkpoint, after?: Checkpoint }> {
    const out: { before?: Checkpoint, after?: Checkpoint } = {}
    for (const [key, row] of [['before', await storedCheckpointBefore(em, seq)], ['after', await storedCheckpointFrom(em, seq)]] as const) {
      if (row === undefined) continue
      const cp = fromRow(row)
      if (this.ours(cp)) out[key] = cp
      else this.reject(`the checkpoint at seq ${row.seq} in table sys_puntos_control`)
    }
    // This instance may know a newer one than the database still holds.
    if (this.newest !== undefined && this.newest.seq >= seq && (out.after === undefined || this.newest.seq < out.after.seq)) out.after = this.newest
    return out
  }

  /** Signed by this key and, in format 2, of this chain. */
  private ours (cp: Checkpoint): boolean {
    return this.opts.signer.valid(cp) && (cp.formato === 1 || cp.cadena === this.opts.cadena)
  }

  /**
   * Writes one new file and tells the log; a failed write (a full or
   * read-only store) is reported and leaves nothing behind. Returns the
   * failure's text, or undefined when the file was written.
   */
  private publish (cp: Checkpoint): string | undefined {
    let file: string | undefined
    let failure: string | undefined
    try {
      file = this.store.write(cp)
      this.unpublished = false
    } catch (err) {
      this.failures++
      this.unpublished = true
      const code = (err as NodeJS.ErrnoException).code
      failure = `the checkpoint directory ${this.opts.dir} is full or not writable (${code ?? (err as Error).message}): checkpoint ${cp.seq} was not written there ` +
        '(it is in table sys_puntos_control and in the log). Free space on its volume or make it writable by the service; the next round writes one by itself'
      this.opts.onProblem(failure, err)
    }
    this.know(cp)
    this.opts.onPublish(cp, file)
    return failure
  }

  /**
   * Why the chain as stored may not be signed: it no longer extends the
   * newest checkpoint known (entries deleted or rewritten). Signing it would
   * hide that from every later verification against the newest checkpoint.
   * The links a run has just appended (`tip.desde` onwards) extend what it
   * read by construction: only the stretch before them is read back.
   */
  async unsignable (em: Db, tip: SealResult): Promise<string | undefined> {
    const known = await this.latest(em)
    if (known === undefined || known.seq === 0) return undefined
    if (tip.seq < known.seq) return 'TRUNCADA'
    if (await linkAt(em, known.seq) !== known.cabeza) return 'REESCRITA'
    const upTo = tip.desde.seq >= known.seq ? tip.desde : undefined
    return (await brokenLink(em, { seq: known.seq, enlace: known.cabeza }, upTo)) === undefined ? undefined : 'REESCRITA'
  }

  /**
   * Seals what became stable and publishes the new head. `onDemand`: wait
   * for another instance's run instead of skipping, and publish a fresh
   * checkpoint even when the head did not move (so does a round after a
   * failed write). Nothing is signed while the chain does not extend the
   * newest checkpoint known (`refused`).
   */
  async run (em: Db, onDemand: boolean): Promise<RunResult> {
    const fecha = (): string => new Date().toISOString()
    let head: Checkpoint | undefined
    let refused: keyof typeof MOTIVOS | undefined
    const sealed = await seal(em, {
      wait: onDemand,
      span: ANCHOR_SPAN,
      inside: async (tem, result) => {
        refused = await this.unsignable(tem, result) as keyof typeof MOTIVOS | undefined
        if (refused !== undefined) {
          this.opts.onProblem(`the global chain no longer extends the newest checkpoint (seq ${this.newest!.seq}): ${REASONS[refused]}; nothing is signed until an auditor has looked (deploy/auditoria/verificar-cadena.mjs --db)`)
          return
        }
        const anchors = result.passed.filter((p) => p.seq !== result.seq).map((p) => this.opts.signer.sign(p, fecha(), this.opts.cadena))
        const known = this.newest
        if (onDemand || this.unpublished || (result.seq > 0 && (known === undefined || result.seq > known.seq))) head = this.opts.signer.sign(result, fecha(), this.opts.cadena)
        await storeCheckpoints(tem, head === undefined ? anchors : [...anchors, head])
      },
    })
    if (sealed !== undefined && sealed.sealed > 0) this.onSealed?.(sealed)
    const unpublished = head === undefined ? undefined : this.publish(head)
    if (head === undefined && sealed === undefined) await this.latest(em.fork())
    return { ...(head !== undefined && { checkpoint: head }), ...(sealed !== undefined && { sealed }), ...(refused !== undefined && { refused }), ...(unpublished !== undefined && { unpublished }) }
  }

  /**
   * Seals what became stable now, waiting for another instance's run, and
   * publishes no checkpoint of the head (the event feed's prompt sealing,
   * records/events/feed-hub.ts). The anchors it passes are kept as a run
   * keeps them, unless the chain may not be signed (the next run says why).
   */
  async sealNow (em: Db): Promise<SealResult | undefined> {
    const fecha = new Date().toISOString()
    const sealed = await seal(em, {
      wait: true,
      span: ANCHOR_SPAN,
      inside: async (tem, result) => {
        if (result.passed.length === 0 || await this.unsignable(tem, result) !== undefined) return
        await storeCheckpoints(tem, result.passed.map((p) => this.opts.signer.sign(p, fecha, this.opts.cadena)))
      },
    })
    return sealed
  }

  /** The chain's head as it is now (for the on-demand answer when nothing moved). */
  head (em: Db): Promise<ChainHead> { return chainHead(em) }
}
