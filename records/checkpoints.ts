/**
 * Signed checkpoints of the global chain's head (SPEC S15, README
 * "Integrity"): evidence, outside the database, of how long the chain was
 * and what its last link was. A checkpoint is
 *
 *   {"formato":1,"seq":n,"cabeza":link(n),"fecha":"<ISO 8601 UTC>","firma":"<base64>"}
 *
 * with `firma` the Ed25519 signature of the canonical JSON of the other four
 * fields. The private key's seed is the `firma` system key (sys_claves,
 * wrapped by ENCRYPTION_KEY), so write access to the database does not give
 * it; the public key (`npm run integrity-key -- --publica`) is all an
 * auditor needs to check one.
 *
 * Each run of the sealer (ledger.ts) stores a signed checkpoint in
 * `sys_puntos_control` every ANCHOR_SPAN entries and at its new head: those
 * bound the stretch of chain /verificar recomputes around a record. The
 * newest head is *published*: one new file in CHECKPOINT_DIR (never
 * overwritten) and one log line. The instance remembers the newest
 * checkpoint it published or read (from the directory, or from the
 * database, signature checked), which is what truncation is measured against.
 */
import { createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EntityManager } from '@mikro-orm/postgresql'
import { canonicalJson } from '../core/canonical.js'
import { MOTIVOS, REASONS } from '../core/errors.js'
import { brokenLink, chainHead, seal, type ChainHead, type SealResult } from './ledger.js'

export interface Checkpoint {
  formato: 1
  seq: number
  cabeza: string
  fecha: string
  firma: string
}

/** A signed checkpoint is stored in the database every this many entries. */
export const ANCHOR_SPAN = 1000

const FILE = /^punto-(\d{12})-[0-9TZ]+-[0-9a-f]{8}\.json$/

export interface Signer {
  /** Raw Ed25519 public key, base64 (what the auditor is given). */
  readonly publicKey: string
  sign (head: ChainHead, fecha: string): Checkpoint
  /** Whether a checkpoint (of unknown origin) is well formed and signed by this key. */
  valid (cp: unknown): cp is Checkpoint
}

/** PKCS#8 DER prefix of an Ed25519 private key, before its 32-byte seed. */
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex')

const signed = (cp: { seq: number, cabeza: string, fecha: string }): Buffer =>
  Buffer.from(canonicalJson({ cabeza: cp.cabeza, fecha: cp.fecha, formato: 1, seq: cp.seq }), 'utf8')

export function createSigner (seed: Buffer): Signer {
  const privateKey: KeyObject = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, seed]), format: 'der', type: 'pkcs8' })
  const publicKey = createPublicKey(privateKey)
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url')
  return {
    publicKey: raw.toString('base64'),
    sign (head, fecha) {
      return { formato: 1, seq: head.seq, cabeza: head.enlace, fecha, firma: sign(null, signed({ seq: head.seq, cabeza: head.enlace, fecha }), privateKey).toString('base64') }
    },
    valid (cp): cp is Checkpoint {
      if (typeof cp !== 'object' || cp === null) return false
      const c = cp as Record<string, unknown>
      if (c.formato !== 1 || !Number.isSafeInteger(c.seq) || (c.seq as number) < 0 || typeof c.cabeza !== 'string' || !/^[0-9a-f]{64}$/.test(c.cabeza) ||
        typeof c.fecha !== 'string' || typeof c.firma !== 'string') return false
      try {
        return verify(null, signed(c as unknown as Checkpoint), publicKey, Buffer.from(c.firma, 'base64'))
      } catch {
        return false
      }
    },
  }
}

interface CheckpointDbRow { seq: string, cabeza: string, fecha: string, firma: string }
const fromRow = (r: CheckpointDbRow): Checkpoint => ({ formato: 1, seq: Number(r.seq), cabeza: r.cabeza, fecha: r.fecha, firma: r.firma })

export interface CheckpointsOptions {
  signer: Signer
  /** CHECKPOINT_DIR. */
  dir: string
  /** Told of every published checkpoint (the log line). */
  onPublish (cp: Checkpoint, file: string | undefined): void
  /** Told when the directory cannot be written or holds a checkpoint this key did not sign. */
  onProblem (message: string, err?: unknown): void
}

/** The checkpoints of one instance: sealing, publishing, and what it knows. */
export class Checkpoints {
  private newest: Checkpoint | undefined
  /** A published checkpoint whose signature does not hold (tampering), kept until the process ends. */
  private forged: string | undefined

  constructor (private readonly opts: CheckpointsOptions) {
    mkdirSync(opts.dir, { recursive: true })
  }

  get signer (): Signer { return this.opts.signer }

  /** What makes every verification fail: a forged checkpoint seen anywhere. */
  problem (): string | undefined { return this.forged }

  private know (cp: Checkpoint): void {
    if (this.newest === undefined || cp.seq > this.newest.seq) this.newest = cp
  }

  private reject (where: string): void {
    this.forged ??= where
    this.opts.onProblem(`${where} is not signed by this service's checkpoint key: the checkpoint store or sys_claves was tampered with (compare with npm run integrity-key -- --publica)`)
  }

  /** Reads the newest checkpoint of CHECKPOINT_DIR (by its seq) into what this instance knows. */
  readDirectory (): void {
    let names: string[]
    try {
      names = readdirSync(this.opts.dir).filter((n) => FILE.test(n)).sort()
    } catch (err) {
      this.opts.onProblem(`cannot read CHECKPOINT_DIR ${this.opts.dir}; make it readable by the service`, err)
      return
    }
    const name = names.at(-1)
    if (name === undefined) return
    let cp: unknown
    try { cp = JSON.parse(readFileSync(join(this.opts.dir, name), 'utf8')) } catch { cp = undefined }
    if (this.opts.signer.valid(cp)) this.know(cp)
    else this.reject(`checkpoint file ${join(this.opts.dir, name)}`)
  }

  /** The newest checkpoint known: this instance's own, the directory's, or the database's (signature checked). */
  async latest (em: EntityManager): Promise<Checkpoint | undefined> {
    const [row] = await em.getConnection().execute<CheckpointDbRow[]>('select seq, cabeza, fecha, firma from sys_puntos_control order by seq desc, id desc limit 1', [], 'all', em.getTransactionContext())
    if (row !== undefined) {
      const cp = fromRow(row)
      if (this.opts.signer.valid(cp)) this.know(cp)
      else this.reject(`the checkpoint at seq ${row.seq} in table sys_puntos_control`)
    }
    return this.newest
  }

  /**
   * The nearest stored checkpoints strictly before `seq` and at or after
   * it; a stored one with a bad signature counts as tampering.
   */
  async around (em: EntityManager, seq: number): Promise<{ before?: Checkpoint, after?: Checkpoint }> {
    const q = (where: string, order: string): Promise<CheckpointDbRow[]> => em.getConnection().execute<CheckpointDbRow[]>(
      `select seq, cabeza, fecha, firma from sys_puntos_control where ${where} order by seq ${order}, id desc limit 1`, [seq], 'all', em.getTransactionContext())
    const out: { before?: Checkpoint, after?: Checkpoint } = {}
    for (const [key, rows] of [['before', await q('seq < ?', 'desc')], ['after', await q('seq >= ?', 'asc')]] as const) {
      const row = rows[0]
      if (row === undefined) continue
      const cp = fromRow(row)
      if (this.opts.signer.valid(cp)) out[key] = cp
      else this.reject(`the checkpoint at seq ${row.seq} in table sys_puntos_control`)
    }
    // This instance may know a newer one than the database still holds.
    if (this.newest !== undefined && this.newest.seq >= seq && (out.after === undefined || this.newest.seq < out.after.seq)) out.after = this.newest
    return out
  }

  private async store (em: EntityManager, cps: Checkpoint[]): Promise<void> {
    if (cps.length === 0) return
    await em.getConnection().execute(`insert into sys_puntos_control (seq, cabeza, fecha, firma) values ${cps.map(() => '(?, ?, ?, ?)').join(', ')}`,
      cps.flatMap((c) => [c.seq, c.cabeza, c.fecha, c.firma]), 'run', em.getTransactionContext())
  }

  /** Writes one new file (never overwriting one) and tells the log. */
  private publish (cp: Checkpoint): void {
    const name = `punto-${String(cp.seq).padStart(12, '0')}-${cp.fecha.replace(/[-:.]/g, '')}-${randomBytes(4).toString('hex')}.json`
    let file: string | undefined = join(this.opts.dir, name)
    try {
      writeFileSync(file, JSON.stringify(cp) + '\n', { flag: 'wx', mode: 0o444 })
    } catch (err) {
      this.opts.onProblem(`cannot write checkpoint file ${file}; make CHECKPOINT_DIR writable by the service (the checkpoint is still in the log)`, err)
      file = undefined
    }
    this.know(cp)
    this.opts.onPublish(cp, file)
  }

  /**
   * Why the chain as stored may not be signed: it no longer extends the
   * newest checkpoint known (entries deleted or rewritten). Signing it would
   * hide that from every later verification against the newest checkpoint.
   */
  async unsignable (em: EntityManager, tip: ChainHead): Promise<string | undefined> {
    const known = await this.latest(em)
    if (known === undefined || known.seq === 0) return undefined
    if (tip.seq < known.seq) return 'TRUNCADA'
    const [row] = await em.getConnection().execute<Array<{ enlace: string }>>('select enlace from sys_cadena where seq = ?', [known.seq], 'all', em.getTransactionContext())
    if (row?.enlace !== known.cabeza) return 'REESCRITA'
    return (await brokenLink(em, { seq: known.seq, enlace: known.cabeza })) === undefined ? undefined : 'REESCRITA'
  }

  /**
   * Seals what became stable and publishes the new head. `onDemand`: wait
   * for another instance's run instead of skipping, and publish a fresh
   * checkpoint even when the head did not move. Nothing is signed while the
   * chain does not extend the newest checkpoint known (`refused`).
   */
  async run (em: EntityManager, onDemand: boolean): Promise<{ checkpoint?: Checkpoint, sealed?: SealResult, refused?: keyof typeof MOTIVOS }> {
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
        const anchors = result.passed.filter((p) => p.seq !== result.seq).map((p) => this.opts.signer.sign(p, fecha()))
        const known = this.newest
        if (onDemand || (result.seq > 0 && (known === undefined || result.seq > known.seq))) head = this.opts.signer.sign(result, fecha())
        await this.store(tem, head === undefined ? anchors : [...anchors, head])
      },
    })
    if (head !== undefined) this.publish(head)
    else if (sealed === undefined) await this.latest(em.fork())
    return { ...(head !== undefined && { checkpoint: head }), ...(sealed !== undefined && { sealed }), ...(refused !== undefined && { refused }) }
  }

  /** The chain's head as it is now (for the on-demand answer when nothing moved). */
  head (em: EntityManager): Promise<ChainHead> { return chainHead(em) }
}
