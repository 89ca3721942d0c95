/**
 * A refused streamed body's connection stays open long enough for the
 * client to read the refusal (http/drop-rest-of-body.ts), also when the
 * client asked for the connection to close and the process stalls right
 * after answering. Node's server used to destroy such a connection right
 * after the answer, over unread bytes: the reset reached the client before
 * it read the 503, and files-outage.test.ts saw status 0 (EPIPE) once in CI.
 */
import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { dropRestOfBody } from '../../http/drop-rest-of-body.js'
import { listenFree } from '../helpers/free-port.js'
import { wire } from '../helpers/wire.js'

const MiB = 1024 * 1024

/** Blocks the event loop for `ms`, as a long collection or a busy machine does. */
function stall (ms: number): void {
  const end = Date.now() + ms
  while (Date.now() < end) { /* the process does nothing else */ }
}

let server: Server | undefined
afterEach(async () => { await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined)) })

/** A server that refuses every body at its first bytes with a 503, drops the rest, then stalls for `stallMs`. */
async function refusing (stallMs: number): Promise<number> {
  server = createServer((req, res) => {
    req.once('data', () => {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"success":false}')
      dropRestOfBody(req)
      stall(stallMs)
    })
  })
  return listenFree(server)
}

describe('a refused upload still being sent', () => {
  it('gets its 503 though it asked to close and the process stalls right after answering', async () => {
    const port = await refusing(2_500)
    const pieces = Array.from({ length: 4 }, () => Buffer.alloc(MiB, 1))
    const answer = await wire(port, { method: 'POST', path: '/', headers: { 'content-length': String(4 * MiB) }, pieces, gapMs: 50 })
    expect([answer.status, answer.body.toString(), answer.failed]).toEqual([503, '{"success":false}', undefined])
  })

  it('closes the connection of a client that never sends the rest, once the window is over', async () => {
    const port = await refusing(0)
    const socket = connect(port, '127.0.0.1')
    const received: Buffer[] = []
    socket.on('data', (c: Buffer) => { received.push(c) })
    socket.on('error', () => { /* a reset is a close too */ })
    const closed = new Promise((resolve) => socket.once('close', resolve))
    socket.write(`POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${64 * MiB}\r\n\r\n`)
    socket.write(Buffer.alloc(MiB, 1))
    // Neither the rest nor an end: only the server's window closes this connection (else the test times out).
    await closed
    expect(Buffer.concat(received).toString()).toMatch(/^HTTP\/1\.1 503 /)
  })
})
