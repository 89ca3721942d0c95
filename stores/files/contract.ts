/**
 * Where evidence files live (docs/operator-guide.md "Evidence files"): a
 * directory shared by every instance (directory.ts) or an S3-compatible
 * object store. An upload is staged first (streamed to a temporary object
 * while its SHA-256 and size are taken) and becomes visible under its key
 * only on `commit`, so a failed or interrupted upload leaves nothing under
 * any key. Stored objects are never changed or removed by the service.
 */
import type { Readable, Transform } from 'node:stream'

/** A byte range, both ends included (a Range request). */
export interface ByteRange {
  readonly start: number
  readonly end: number
}

export interface StageOptions {
  /** Past this many bytes the upload fails with 413 and nothing is kept. */
  readonly maxBytes: number
  /** What the bytes pass through on their way to storage (encryption); the hash and size are of the bytes given. */
  readonly transform?: Transform
}

/** An upload written to a temporary object, not yet under its key. */
export interface StagedFile {
  /** SHA-256 (lower-case hex) of the bytes given. */
  readonly sha256: string
  readonly bytes: number
  /** The first bytes given (up to 4 KiB), to tell the content's type. */
  readonly head: Buffer
  /** Makes the object readable under `key` (atomically: the whole object or none). */
  commit (key: string): Promise<void>
  /** Drops the temporary object. */
  discard (): Promise<void>
}

export interface FileStore {
  /** Streams `input` to a temporary object; the stream's error (an interrupted upload, 413) discards it. */
  stage (input: Readable, opts: StageOptions): Promise<StagedFile>
  /** The stored size of `key`, or undefined when nothing is stored there. */
  size (key: string): Promise<number | undefined>
  /** The stored bytes of `key` (a range of them when given). */
  open (key: string, range?: ByteRange): Promise<Readable>
  /** Where the files are, for the log (no secret). */
  describe (): string
  /** Lets go of connections (the app's close). */
  close? (): void
}

/** How much of an upload's beginning is kept for sniffing its type. */
export const HEAD_BYTES = 4096
