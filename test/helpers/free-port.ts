/** A TCP port free on 127.0.0.1 right now (for servers a test starts itself). */
import { createServer } from 'node:net'

export async function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => { resolve(port) })
    })
  })
}
