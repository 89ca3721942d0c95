/**
 * The `Idempotency-Key` of a create or an import (docs/user-guide.md
 * "Retries and Idempotency-Key"; the choices in docs/decisions.md
 * "Idempotency keys"): a route's handler wrapped so that a retry with the
 * same key, route, query and body answers the first answer instead of
 * writing again, on any instance (the store is shared).
 *
 * Without the header the handler runs as it is: no store, no hash. With it:
 * the key, scoped to the caller, is claimed in one step; the request runs
 * holding it (a lease renewed while it runs, so a dead instance frees it);
 * a 2xx answer is kept, sealed with the field cipher, once the handler has
 * returned (the write committed); anything else lets the key go. A
 * streamed body (an import) is hashed as the handler reads it, so its
 * fingerprint is known only at its end, which is when it is kept.
 */
import { createHash, randomUUID } from 'node:crypto'
import { Transform, type Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { canonicalJson } from '../core/canonical.js'
import type { FieldCipher } from '../core/crypto.js'
import { AppError, DETAILS } from '../core/errors.js'
import type { IdempotencyStore } from '../stores/idempotency/contract.js'

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

export interface IdempotencyOptions {
  readonly store: IdempotencyStore
  /** Seals the kept answers (records' decrypted values) and keys the fingerprints (bodies may hold passwords). */
  readonly cipher: FieldCipher
  /** How long an answer is replayed (IDEMPOTENCY_TTL). */
  readonly ttlMs: number
  /** How long a running request holds its key unless renewed (IDEMPOTENCY_LEASE). */
  readonly leaseMs: number
}

/** Seconds a repeat is told to wait while the first runs: a create takes milliseconds, an import is polled. */
export const RUNNING_RETRY_AFTER = 1

const JSON_TYPE = 'application/json; charset=utf-8'
const KEY = /^[\x20-\x7e]{1,255}$/

/** An answer as kept: fingerprint, status, ETag and the sealed body. */
interface Kept {
  readonly f: string
  readonly s: number
  readonly e?: string
  readonly b: string
}

/** The header's key, unquoted when sent as the draft's structured-field string (`"…"`); a 400 naming the header when it is not 1 to 255 printable ASCII characters. */
export function idempotencyKey (raw: string | string[] | undefined): string | undefined {
  if (raw === undefined) return undefined
  let key = Array.isArray(raw) ? raw.join(', ') : raw
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1).replace(/\\(["\\])/g, '$1')
  if (!KEY.test(key)) throw new AppError('DATOS_INVALIDOS', [{ campo: 'Idempotency-Key', mensaje: DETAILS.CLAVE_IDEMPOTENCIA_NO_VALIDA }])
  return key
}

const isStream = (body: unknown): body is Readable => typeof (body as { pipe?: unknown } | null | undefined)?.pipe === 'function'

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')

/** `input` hashed as it is read; `digest` reads what is left first (a 2xx that stopped short of the end). */
function hashing (input: Readable): { stream: Readable, digest: () => Promise<string> } {
  const hash = createHash('sha256')
  let hex: string | undefined
  const stream = new Transform({
    transform (chunk: Buffer, _encoding, callback) { hash.update(chunk); callback(null, chunk) },
    flush (callback) { hex = hash.digest('hex'); callback() },
  })
  input.on('error', (err) => stream.destroy(err))
  input.pipe(stream)
  return {
    stream,
    async digest () {
      if (hex === undefined) for await (const _chunk of stream) { /* drained: flush sets hex */ }
      return hex!
    },
  }
}

/** A whole streamed body's SHA-256 (a repeat of an answered import: read, never parsed). */
async function drained (input: Readable): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of input) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** What makes two requests the same: method, URL as sent (path and query), a streamed body's type, and the body's hash; keyed, so a stored one reveals no body. */
function fingerprint (request: FastifyRequest, cipher: FieldCipher, streamed: boolean, bodyHash: string): string {
  const type = streamed ? request.headers['content-type'] ?? '' : ''
  return cipher.digest(`idempotencia\u0000${request.method}\u0000${request.url}\u0000${type}\u0000${bodyHash}`)
}

/** `handler` answering a repeat of an answered key with the first answer (see above). */
export function withIdempotencyKey (handler: Handler, opts: IdempotencyOptions): Handler {
  const { store, cipher, ttlMs, leaseMs } = opts
  const keyed = async (request: FastifyRequest, reply: FastifyReply, key: string): Promise<unknown> => {
    const scoped = `${request.caller.id}:${key}`
    const body: unknown = request.body
    const streamed = isStream(body)
    const token = randomUUID()
    const claim = await store.claim(scoped, token, leaseMs)
    if (claim.state === 'running') throw new AppError('PETICION_EN_CURSO', undefined, { 'retry-after': String(RUNNING_RETRY_AFTER) })
    if (claim.state === 'answered') {
      const kept = JSON.parse(claim.answer) as Kept
      const hash = streamed ? await drained(body) : sha256(canonicalJson(body))
      if (fingerprint(request, cipher, streamed, hash) !== kept.f) throw new AppError('CLAVE_IDEMPOTENCIA_REUTILIZADA')
      void reply.code(kept.s).type(JSON_TYPE).header('idempotent-replayed', 'true')
      if (kept.e !== undefined) void reply.header('etag', kept.e)
      return cipher.decrypt(kept.b, scoped, 'idempotencia')
    }
    // Claimed: the hash of a JSON body before the handler may touch it; a stream's as the handler reads it.
    const jsonHash = streamed ? undefined : sha256(canonicalJson(body))
    const hashed = streamed ? hashing(body) : undefined
    if (hashed !== undefined) request.body = hashed.stream
    const renewal = setInterval(() => {
      store.renew(scoped, token, leaseMs).then((held) => {
        if (!held) request.log.warn({ idempotencyKey: key }, 'an Idempotency-Key hold expired while its request ran (IDEMPOTENCY_LEASE)')
      }, (err: Error) => { request.log.warn({ err: { message: err.message } }, 'an Idempotency-Key hold could not be renewed') })
    }, Math.max(1, Math.floor(leaseMs / 3)))
    renewal.unref()
    let kept = false
    try {
      const result = await handler(request, reply)
      if (reply.statusCode < 200 || reply.statusCode >= 300 || reply.sent) return result
      // The write committed: the answer as Fastify would send it, kept before it leaves.
      const text = reply.serialize(result) as string
      const hash = hashed !== undefined ? await hashed.digest() : jsonHash!
      const etag = reply.getHeader('etag')
      const answer: Kept = { f: fingerprint(request, cipher, streamed, hash), s: reply.statusCode, ...(typeof etag === 'string' && { e: etag }), b: cipher.encrypt(text, scoped, 'idempotencia') }
      const stored = await store.answer(scoped, token, JSON.stringify(answer), ttlMs).catch((err: Error) => {
        // Answered anyway: the write is done, and a 503 would only invite the retry that writes twice.
        request.log.warn({ err: { message: err.message } }, 'an Idempotency-Key answer could not be kept')
        return undefined
      })
      kept = stored === true
      if (stored === false) request.log.warn({ idempotencyKey: key }, 'an Idempotency-Key answer was not kept: another request holds the key (IDEMPOTENCY_LEASE too short?)')
      void reply.type(JSON_TYPE)
      return text
    } finally {
      clearInterval(renewal)
      if (!kept) await store.release(scoped, token).catch(() => undefined)
    }
  }
  return (request, reply) => {
    let key: string | undefined
    try {
      key = idempotencyKey(request.headers['idempotency-key'])
    } catch (err) {
      return Promise.reject(err)
    }
    // Most requests carry no key: the handler's own promise, with no async frame around it (docs/performance.md "A create runs cold").
    return key === undefined ? handler(request, reply) : keyed(request, reply, key)
  }
}
