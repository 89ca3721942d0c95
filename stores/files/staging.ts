/** What every file store does to an upload on its way: count it against the limit, hash it, keep its head. */
import { createHash } from 'node:crypto'
import { Transform, type Readable, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { AppError } from '../../core/errors.js'
import { HEAD_BYTES, type StagedFile, type StageOptions } from './contract.js'

export interface Measured {
  readonly sha256: string
  readonly bytes: number
  readonly head: Buffer
}

/** A pass-through that fails with 413 past `maxBytes`; `result()` once it has ended. */
export function measuring (maxBytes: number): { stream: Transform, result: () => Measured } {
  const hash = createHash('sha256')
  let bytes = 0
  const heads: Buffer[] = []
  let headBytes = 0
  const stream = new Transform({
    transform (chunk: Buffer, _encoding, callback) {
      bytes += chunk.length
      if (bytes > maxBytes) { callback(new AppError('PETICION_DEMASIADO_GRANDE')); return }
      hash.update(chunk)
      if (headBytes < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headBytes)
        heads.push(Buffer.from(part))
        headBytes += part.length
      }
      callback(null, chunk)
    },
  })
  let sha256: string | undefined
  return { stream, result: () => ({ sha256: sha256 ??= hash.digest('hex'), bytes, head: Buffer.concat(heads) }) }
}

/**
 * `input` measured (as `measuring`), as a stream that fails when the
 * input fails or closes before its end (an interrupted upload). The input
 * is never destroyed here: a refused upload (413) is answered on its
 * connection; the caller stops reading it with `detach`.
 */
export function intake (input: Readable, maxBytes: number): { stream: Transform, result: () => Measured, detach: () => void } {
  const m = measuring(maxBytes)
  // The client's own failure carries no code of its own (an aborted request is ECONNRESET), so it is never taken for the store's (unavailable.ts).
  const fail = (): void => { m.stream.destroy(new Error('upload interrupted')) }
  const onClose = (): void => { if (!input.readableEnded) fail() }
  input.once('error', fail)
  input.once('close', onClose)
  input.pipe(m.stream)
  return {
    ...m,
    detach: () => {
      input.unpipe(m.stream)
      input.off('error', fail)
      input.off('close', onClose)
    },
  }
}

/** `stages` piped into `sink`; rejects when any fails. */
export async function pipeInto (stages: Array<Readable | Writable>, sink: Writable): Promise<void> {
  const all: Array<Readable | Writable> = [...stages, sink]
  await pipeline(all as [Readable, ...Writable[]])
}

/** Where a store writes an upload: a temporary object, then its key. */
export interface Temporary {
  /** Writes what the stages give (appending its own sink) to the temporary object; rejects when any stage fails. */
  write (stages: Array<Readable | Writable>): Promise<void>
  discard (): Promise<void>
  commit (key: string): Promise<void>
}

/** The stage every store does: `input` measured, transformed, written to `temp`, which is discarded on any failure. */
export async function stageInto (input: Readable, opts: StageOptions, temp: Temporary): Promise<StagedFile> {
  const measure = intake(input, opts.maxBytes)
  try {
    await temp.write([measure.stream, ...(opts.transform !== undefined ? [opts.transform] : [])])
  } catch (err) {
    // The failure that matters is the upload's, not a failed clean-up's.
    await temp.discard().catch(() => undefined)
    throw err
  } finally {
    measure.detach()
  }
  const { sha256, bytes, head } = measure.result()
  return { sha256, bytes, head, discard: () => temp.discard(), commit: (key) => temp.commit(key) }
}
