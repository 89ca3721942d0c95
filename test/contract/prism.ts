/**
 * Stoplight Prism as a validating proxy in front of a listening service
 * (docs/user-guide.md "API explorer and OpenAPI document"): every request
 * and every answer is checked against the document; with `--errors` a
 * violation is an error answer and the `sl-violations` header names it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from '../helpers/free-port.js'

export interface Proxy {
  readonly base: string
  /** What Prism printed (its violations are logged too). */
  readonly log: () => string
  stop (): Promise<void>
}

export async function startPrism (documentPath: string, upstream: string): Promise<Proxy> {
  const port = await freePort()
  const bin = new URL('../../node_modules/.bin/prism', import.meta.url).pathname
  // Prism's own Node would refuse a request past 16 KiB itself: it takes 64 KiB, so the service's 431 is what comes back.
  const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-http-header-size=65536`.trim() }
  const child: ChildProcess = spawn(bin, ['proxy', documentPath, upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'], env })
  let output = ''
  child.stdout!.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { output += d.toString() })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prism exited (${child.exitCode}):\n${output}`)
    if (/Prism is listening/.test(output)) break
    if (Date.now() > deadline) throw new Error(`prism did not start within 90 s:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return {
    base,
    log: () => output,
    async stop () {
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}
