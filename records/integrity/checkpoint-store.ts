/**
 * CHECKPOINT_DIR as a store of checkpoint files (docs/operator-guide.md "Tamper evidence"):
 * each written atomically or not at all, read newest first, and compacted
 * so that it does not grow without bound.
 *
 * A write goes to a hidden temporary file in the same directory, is
 * flushed to disk (fsync), renamed to its final name and the directory
 * flushed too: a full or failing volume leaves either the whole file or
 * nothing (the temporary file is removed), never an empty or cut-short
 * checkpoint that would read as evidence.
 *
 * Compaction (`compact`): every file of the last day is kept; of the files
 * between one and 30 days old, the newest of each hour; up to a year old,
 * the newest of each day; older, the newest of each month (UTC, by the time
 * in the name): after the first year the store grows by 12 files a year.
 * Only files this
 * chain's key signed are ever removed: another chain's, unreadable ones and
 * forgeries stay for a person to look at.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { Checkpoint } from './checkpoint-format.js'

/** punto-<seq, 12 digits>-<fecha without separators>-<random>.json */
const FILE = /^punto-(\d{12})-(\d{8}T\d{6}\d*Z)-[0-9a-f]{8}\.json$/
const TEMP = /^\.punto-.*\.tmp$/

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Every file younger than this is kept. */
export const KEEP_ALL_MS = DAY
/** Up to this age, the newest file of each hour; beyond it, of each day. */
export const KEEP_HOURLY_MS = 30 * DAY
/** Up to this age, the newest file of each day; beyond it, of each month. */
export const KEEP_DAILY_MS = 365 * DAY
/** A temporary file older than this was left by a process that died mid-write. */
const STALE_TEMP_MS = HOUR

export class CheckpointStore {
  constructor (readonly dir: string) {
    mkdirSync(dir, { recursive: true })
  }

  /** Checkpoint file names, newest (highest seq, then time) first; throws when the directory cannot be read. */
  names (): string[] {
    return readdirSync(this.dir).filter((n) => FILE.test(n)).sort().reverse()
  }

  path (name: string): string { return join(this.dir, name) }

  read (name: string): string { return readFileSync(this.path(name), 'utf8') }

  /**
   * Writes one new file, atomically; returns its path. On failure nothing
   * is left behind and the error is thrown.
   */
  write (cp: Checkpoint): string {
    const name = `punto-${String(cp.seq).padStart(12, '0')}-${cp.fecha.replace(/[-:.]/g, '')}-${randomBytes(4).toString('hex')}.json`
    const temp = this.path(`.${name}.${process.pid}.tmp`)
    const file = this.path(name)
    let fd: number | undefined
    try {
      fd = openSync(temp, 'wx', 0o444)
      const data = Buffer.from(JSON.stringify(cp) + '\n', 'utf8')
      let done = 0
      while (done < data.length) done += writeSync(fd, data, done)
      fsyncSync(fd)
      closeSync(fd)
      fd = undefined
      renameSync(temp, file)
    } catch (err) {
      if (fd !== undefined) try { closeSync(fd) } catch { /* already failing */ }
      try { unlinkSync(temp) } catch { /* never created */ }
      throw err
    }
    this.syncDirectory()
    return file
  }

  /** Makes the rename durable; some file systems cannot fsync a directory, which is no failure of the write. */
  private syncDirectory (): void {
    let fd: number | undefined
    try {
      fd = openSync(this.dir, 'r')
      fsyncSync(fd)
    } catch { /* EINVAL, EISDIR, EPERM: not supported here */ } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }

  /**
   * Removes the files compaction does not keep, among those `own` says this
   * chain's key signed, and temporary files left by a dead writer; returns
   * how many checkpoint files went.
   */
  compact (now: number, own: (name: string) => boolean): number {
    for (const n of readdirSync(this.dir).filter((x) => TEMP.test(x))) {
      try { if (now - statSync(this.path(n)).mtimeMs > STALE_TEMP_MS) unlinkSync(this.path(n)) } catch { /* gone meanwhile */ }
    }
    const kept = new Set<string>()
    let removed = 0
    // Newest first: the first file of a bucket is the one kept.
    for (const name of this.names()) {
      const at = timeOf(name)
      if (at === undefined || now - at < KEEP_ALL_MS) continue
      const age = now - at
      const bucket = new Date(at).toISOString().slice(0, age < KEEP_HOURLY_MS ? 13 : age < KEEP_DAILY_MS ? 10 : 7)
      if (!kept.has(bucket)) {
        if (own(name)) kept.add(bucket)
        continue
      }
      if (!own(name)) continue
      try { unlinkSync(this.path(name)); removed++ } catch { /* another instance removed it */ }
    }
    return removed
  }
}

/** The instant in a file's name (what it was signed at). */
function timeOf (name: string): number | undefined {
  const m = FILE.exec(name)?.[2]
  if (m === undefined) return undefined
  const t = Date.parse(`${m.slice(0, 4)}-${m.slice(4, 6)}-${m.slice(6, 8)}T${m.slice(9, 11)}:${m.slice(11, 13)}:${m.slice(13, 15)}.${m.slice(15, 18) || '0'}Z`)
  return Number.isNaN(t) ? undefined : t
}
