/**
 * The route's side of an import's streamed body (docs/user-guide.md
 * "Import (importar)"; the body itself: plugins/import-body.ts): its
 * encoding, the signal of the client's going away, and what is done with
 * the rest of a body refused before its end.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../core/errors.js'
import { IMPORT_ENCODINGS, type ImportEncoding } from '../records/import-text.js'

/** Charset names (lower case) of the encodings an import takes; US-ASCII is UTF-8's first half. */
const CHARSETS: Readonly<Record<string, ImportEncoding>> = {
  'utf-8': 'utf-8', utf8: 'utf-8', 'us-ascii': 'utf-8',
  'windows-1252': 'windows-1252', cp1252: 'windows-1252', 'x-cp1252': 'windows-1252',
  'iso-8859-1': 'iso-8859-1', 'iso_8859-1': 'iso-8859-1', latin1: 'iso-8859-1', l1: 'iso-8859-1',
}

/**
 * The encoding of an import's body (docs/user-guide.md "Import
 * (importar)"): `codificacion` when given, else the Content-Type's
 * charset, else UTF-8; a charset it cannot read is 400 naming the ones it can.
 */
export function importEncoding (request: FastifyRequest, codificacion: ImportEncoding | undefined): ImportEncoding {
  if (codificacion !== undefined) return codificacion
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(request.headers['content-type'] ?? '')
  if (m === null) return 'utf-8'
  const encoding = CHARSETS[m[1]!.toLowerCase()]
  if (encoding === undefined) throw new AppError('DATOS_INVALIDOS', [{ campo: 'charset', mensaje: `una importación se lee en ${IMPORT_ENCODINGS.join(', ')}, no en ${m[1]!.slice(0, 40)}` }])
  return encoding
}

/** Aborted when the connection closes before the answer was sent: the client is gone. */
export function clientSignal (reply: FastifyReply): AbortSignal {
  const gone = new AbortController()
  reply.raw.once('close', () => { if (!reply.raw.writableFinished) gone.abort() })
  return gone.signal
}

/** Logged when an import stopped because its client went away (docs/operator-guide.md "Importing records (npm run import)"). */
export const ABANDONED = 'import abandoned by its client before the commit: rolled back, nothing written'

/**
 * After an import failed: one whose client went away is logged (it wrote
 * nothing). The rest of a body refused before its end (413 `Demasiadas
 * filas`, a malformed line) is dropped by the error handler
 * (http/drop-rest-of-body.ts).
 */
export function importFailed (request: FastifyRequest, signal: AbortSignal): void {
  if (signal.aborted) request.log.warn({ url: request.url }, ABANDONED)
}

