/**
 * The ceiling of `npm run bench:files` (docs/performance.md "Evidence
 * files"), a child process of its own as the service is: a bare
 * `node:http` server (no Fastify, no database, no auth) that does only
 * what any service must do to store and return a file, as fast as Node
 * does it. `POST /<name>` streams the body into `<dir>/<name>` and
 * `fsync`s it before answering (with `?sha256=1`, hashed with SHA-256 on the way in, as the
 * service must hash evidence: S22, the ETag and the seal), answering
 * `{"sha256", "bytes"}`; `GET /<name>` streams the file back with
 * fs.createReadStream. The directory is BENCH_CEILING_DIR (the service's
 * own files directory's parent, so the same disk). Over IPC: `ready` with
 * its base URL; `exit` stops it.
 */
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { stat } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'

export type CeilingMessage = { type: 'ready', base: string }

const dir = process.env.BENCH_CEILING_DIR!
const NAME = /^[0-9a-z-]{1,64}$/

/** The body into the file, hashed on the way when asked, flushed to disk (`flush`: fsync before close) before the answer. */
async function store (req: IncomingMessage, res: ServerResponse, path: string, hashing: boolean): Promise<void> {
  const hash = createHash('sha256')
  const sink = createWriteStream(path, { flush: true })
  const closed = once(sink, 'close')
  if (hashing) await pipeline(req, new Transform({ transform (chunk: Buffer, _e, cb) { hash.update(chunk); cb(null, chunk) } }), sink)
  else await pipeline(req, sink)
  await closed
  res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ sha256: hashing ? hash.digest('hex') : null, bytes: sink.bytesWritten }))
}

async function serve (res: ServerResponse, path: string): Promise<void> {
  const { size } = await stat(path)
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size })
  await pipeline(createReadStream(path), res)
}

const server = createServer((req, res) => {
  const url = new URL(req.url!, 'http://ceiling')
  const name = url.pathname.slice(1)
  const done = (err: unknown): void => { if (!res.headersSent) res.writeHead(500).end(String(err)); else res.destroy() }
  if (!NAME.test(name)) { res.writeHead(404).end(); return }
  const path = join(dir, name)
  if (req.method === 'POST') store(req, res, path, url.searchParams.get('sha256') === '1').catch(done)
  else if (req.method === 'GET') serve(res, path).catch(done)
  else res.writeHead(405).end()
})
server.listen(0, '127.0.0.1', () => {
  const addr = server.address()
  if (addr === null || typeof addr === 'string') throw new Error('no port')
  process.send!({ type: 'ready', base: `http://127.0.0.1:${addr.port}` } satisfies CeilingMessage)
})
process.on('message', (m: { type: 'exit' }) => { if (m.type === 'exit') server.close(() => process.exit(0)) })
