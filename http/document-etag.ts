/**
 * A document built once per start (on its first request) and answered with its ETag (docs/operator-guide.md "Security headers",
 * /docs/json): a client that sends the ETag back in If-None-Match gets 304
 * and no body, and the document is never serialised again.
 */
import { createHash } from 'node:crypto'

export interface TaggedDocument {
  readonly body: string
  /** A strong ETag: a hash of the body, quoted. */
  readonly etag: string
}

export function taggedDocument (body: string): TaggedDocument {
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` }
}

/** RFC 9110 §13.1.2: `*`, or any listed tag equal to ours by the weak comparison. */
export function notModified (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  return ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, '')).some((t) => t === '*' || t === etag)
}
