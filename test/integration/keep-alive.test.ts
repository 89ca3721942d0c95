/**
 * The service's server keeps an idle client connection open for
 * KEEP_ALIVE_TIMEOUT (docs/operator-guide.md "nginx in front"), not node's own
 * 5 s: the server bin/server.ts serves on (http/starting-server.ts; the app's
 * handler only answers on it), made from the configuration, holds a
 * connection idle for 7 s and answers a second request on it; with
 * KEEP_ALIVE_TIMEOUT=1s it closes it. The full
 * 65 s hold behind nginx is in test/faults/nginx-keepalive.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../core/config.js'
import { startingServer, type StartingServer } from '../../http/starting-server.js'

const dataDir = mkdtempSync(join(tmpdir(), 'policia-keep-alive-'))
const servers: StartingServer[] = []

afterAll(async () => {
  for (const s of servers) await s.drain(100)
  rmSync(dataDir, { recursive: true, force: true })
})

/** bin/server.ts's server, made from the configuration with this KEEP_ALIVE_TIMEOUT (it answers /health itself); its port. */
async function serve (keepAlive: string): Promise<number> {
  const config = loadConfig({ DATA_DIR: dataDir, KEEP_ALIVE_TIMEOUT: keepAlive })
  const starting = startingServer(0, '127.0.0.1', config.keepAliveTimeoutMs)
  servers.push(starting)
  await starting.listen()
  return (starting.server.address() as { port: number }).port
}

async function get (socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (d: Buffer): void => {
      text += String(d)
      const head = text.indexOf('\r\n\r\n')
      const length = /content-length: (\d+)/i.exec(text)
      if (head >= 0 && (length !== null ? text.length >= head + 4 + Number(length[1]) : text.endsWith('\r\n0\r\n\r\n'))) { socket.off('data', onData); socket.off('close', onClose); resolve(text.split('\r\n')[0]!) }
    }
    const onClose = (): void => { reject(new Error('closed before the answer')) }
    socket.on('data', onData)
    socket.once('close', onClose)
    socket.write('GET /health HTTP/1.1\r\nHost: policia\r\n\r\n')
  })
}

async function idleConnection (port: number): Promise<{ socket: Socket, closed: () => boolean }> {
  const socket = connect(port, '127.0.0.1')
  await new Promise<void>((resolve) => { socket.once('connect', resolve) })
  let closed = false
  expect(await get(socket)).toBe('HTTP/1.1 200 OK')
  socket.once('close', () => { closed = true })
  return { socket, closed: () => closed }
}

describe('keep-alive', () => {
  it('holds an idle connection past node\'s 5 s and answers on it; closes it after KEEP_ALIVE_TIMEOUT', async () => {
    const [long, short] = await Promise.all([serve('75s'), serve('1s')])
    const [a, b] = await Promise.all([idleConnection(long), idleConnection(short)])
    await new Promise((resolve) => setTimeout(resolve, 7_000))
    expect(a.closed()).toBe(false)
    expect(await get(a.socket)).toBe('HTTP/1.1 200 OK')
    a.socket.destroy()
    expect(b.closed()).toBe(true)
  }, 30_000)
})
