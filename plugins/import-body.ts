/**
 * Bodies of an import (docs/user-guide.md "Import (importar)"): `text/csv`
 * and `application/x-ndjson`, taken only by routes whose config says
 * `importBody` (415 elsewhere, as any type but JSON) and handed to the
 * handler as a stream, which reads it row by row. Up to IMPORT_MAX_BYTES
 * (default 50 MiB) instead of the 1 MiB every other body keeps
 * (plugins/json-body.ts): a declared Content-Length above it is refused at
 * once, and a stream that grows past it fails with the same 413. Also
 * the body's encoding (`?codificacion=` or the charset), the signal of the
 * client's going away, and what is done with the rest of a body refused
 * before its end.
 */
import fp from 'fastify-plugin'
import { Transform, type Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../core/errors.js'
import { IMPORT_ENCODINGS, type ImportEncoding } from '../records/import-text.js'

export const IMPORT_TYPES = ['text/csv', 'application/x-ndjson'] as const

/** `input`, failing with 413 once more than `limit` bytes have passed. */
function limited (input: Readable, limit: number): Readable {
  let seen = 0
  const out = new Transform({
    transform (chunk: Buffer, _encoding, callback) {
      seen += chunk.length
      callback(seen > limit ? new AppError('PETICION_DEMASIADO_GRANDE') : null, chunk)
    },
  })
  input.on('error', (err) => out.destroy(err))
  return input.pipe(out)
}

/** Charset names (lower case) of the encodings an import takes; US-ASCII is UTF-8's first half. */
const CHARSETS: Readonly<Record<string, ImportEncoding>> = {
  'utf-8': 'utf-8', utf8: 'utf-8', 'us-ascii': 'utf-8',
  'windows-1252': 'windows-1252', cp1252: 'windows-1252', 'x-cp1252': 'windows-1252',
  'iso-8859-1': 'iso-8859-1', 'iso_8859-1': 'iso-8859-1', latin1: 'iso-8859-1', 'l1': 'iso-8859-1',
}

/**
 * The encoding of an import's body (docs/user-guide.md "Import
 * (importar)"): `codificacion` when given, else the Content-Type's
 * charset, else UTF-8; a charset it cannot read is 415.
 */
export function importEncoding (request: FastifyRequest, codificacion: ImportEncoding | undefined): ImportEncoding {
  if (codificacion !== undefined) return codificacion
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(request.headers['content-type'] ?? '')
  if (m === null) return 'utf-8'
  const encoding = CHARSETS[m[1]!.toLowerCase()]
  if (encoding === undefined) throw new AppError('TIPO_CONTENIDO_NO_SOPORTADO', [{ campo: 'charset', mensaje: `una importación se lee en ${IMPORT_ENCODINGS.join(', ')}, no en ${m[1]!.slice(0, 40)}` }])
  return encoding
}

/** Aborted when the connection closes before the answer was sent: the client is gone. */
export function clientSignal (reply: FastifyReply): AbortSignal {
  const gone = new AbortController()
  reply.raw.once('close', () => { if (!reply.raw.writableFinished) gone.abort() })
  return gone.signal
}

/**
 * After a refusal before the body's end (413 `Demasiadas filas`, a
 * malformed line): the rest is discarded unparsed and the connection is
 * closed after the answer, so a client still sending learns at once.
 */
export function dropRest (request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.complete) return
  void reply.header('connection', 'close')
  request.raw.unpipe()
  request.raw.resume()
}

async function importBodyPlugin (app: FastifyInstance): Promise<void> {
  const limit = app.config.importMaxBytes
  app.addContentTypeParser([...IMPORT_TYPES], (request, payload, done) => {
    if (request.routeOptions.config.importBody !== true) { done(new AppError('TIPO_CONTENIDO_NO_SOPORTADO'), undefined); return }
    if (Number(request.headers['content-length']) > limit) { done(new AppError('PETICION_DEMASIADO_GRANDE'), undefined); return }
    done(null, limited(payload, limit))
  })
}

export default fp(importBodyPlugin, { name: 'policia-import-body', fastify: '5.x', dependencies: ['policia-config', 'policia-json-body'] })
