/**
 * Ports for the servers a test starts itself, all below 32768: the kernel
 * hands out 32768–60999 (ip_local_port_range) as the local port of every
 * outgoing connection, so a server port taken from that range can be
 * taken back by a client before the server binds it, or a client polling
 * it before it listens can connect to itself (a TCP simultaneous open),
 * and the server then fails to start. The CI of 11-29 lost a Sentinel so
 * (docs/testing.md "Ports").
 */
import { createServer, type Server } from 'node:net'

const LOW = 20_000
const HIGH = 32_767
// Handed out by this process already: a port is not handed out twice before it is bound.
const given = new Set<number>()

const pick = (): number => {
  for (;;) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1))
    if (!given.has(port)) return port
  }
}

const tryListen = async (server: Server, port: number, host: string): Promise<boolean> =>
  new Promise((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException): void => {
      server.off('listening', ok)
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false); else reject(err)
    }
    const ok = (): void => { server.off('error', fail); resolve(true) }
    server.once('error', fail)
    server.once('listening', ok)
    server.listen(port, host)
  })

/** `attempt` on random ports below 32768 until it answers (undefined: that port was taken). */
async function onFreePort<T> (attempt: (port: number) => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const port = pick()
    const done = await attempt(port)
    if (done !== undefined) {
      given.add(port)
      return done
    }
  }
  throw new Error(`no free port in ${LOW}–${HIGH} after 200 tries`)
}

/** A port below 32768 free on 127.0.0.1 right now, for a server another process starts. */
export async function freePort (): Promise<number> {
  return onFreePort(async (port) => {
    const probe = createServer()
    if (!await tryListen(probe, port, '127.0.0.1')) return undefined
    await new Promise((resolve) => probe.close(resolve))
    return port
  })
}

/** Makes `server` (a node:net or node:http server) listen on a free port below 32768 of `host`; returns the port. */
export async function listenFree (server: Server, host = '127.0.0.1'): Promise<number> {
  return onFreePort(async (port) => await tryListen(server, port, host) ? port : undefined)
}

/** `app.listen` (a Fastify instance) on a free port below 32768 of 127.0.0.1; returns its base URL. */
export async function listenApp (app: { listen: (opts: { host: string, port: number }) => Promise<string> }): Promise<string> {
  return onFreePort(async (port) => {
    try {
      await app.listen({ host: '127.0.0.1', port })
      return `http://127.0.0.1:${port}`
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined
      throw err
    }
  })
}
