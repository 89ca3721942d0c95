/**
 * Bodies of an import (docs/user-guide.md "Import (importar)"): `text/csv`
 * and `application/x-ndjson`, taken only by routes whose config says
 * `importBody` (415 elsewhere, as any type but JSON) and handed to the
 * handler as a stream, which reads it row by row. Up to IMPORT_MAX_BYTES
 * (default 50 MiB) instead of the 1 MiB every other body keeps
 * (plugins/json-body.ts): a declared Content-Length above it is refused at
 * once, and a stream that grows past it fails with the same 413. The
 * handler's side of such a body: generate/import-request.ts.
 */
import fp from 'fastify-plugin'
import { Transform, type Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../core/errors.js'

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

async function importBodyPlugin (app: FastifyInstance): Promise<void> {
  const limit = app.config.importMaxBytes
  app.addContentTypeParser([...IMPORT_TYPES], (request, payload, done) => {
    if (request.routeOptions.config.importBody !== true) { done(new AppError('TIPO_CONTENIDO_NO_SOPORTADO'), undefined); return }
    if (Number(request.headers['content-length']) > limit) { done(new AppError('PETICION_DEMASIADO_GRANDE'), undefined); return }
    done(null, limited(payload, limit))
  })
}

export default fp(importBodyPlugin, { name: 'policia-import-body', fastify: '5.x', dependencies: ['policia-config', 'policia-json-body'] })
