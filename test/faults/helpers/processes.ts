/**
 * Child processes a fault test starts (service instances, redis-server,
 * nginx): each is tracked by pid and killed if the test process exits
 * without stopping it, so a failed run leaves nothing behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { createWriteStream } from 'node:fs'

const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) {
    try { process.kill(child.pid!, 'SIGKILL') } catch { /* gone */ }
  }
})

/** Starts a process with its output appended to `logFile`. */
export function startProcess (command: string, args: string[], opts: SpawnOptions & { logFile: string }): ChildProcess {
  const { logFile, ...spawnOpts } = opts
  const child = spawn(command, args, { ...spawnOpts, stdio: ['ignore', 'pipe', 'pipe'] })
  const log = createWriteStream(logFile, { flags: 'a' })
  // Two sources into one file: neither may end it (stderr writing after stdout ended it was an uncaught
  // 'write after end' in a fault run); it ends once the child's output has closed.
  child.stdout!.pipe(log, { end: false })
  child.stderr!.pipe(log, { end: false })
  child.once('close', () => { log.end() })
  running.add(child)
  child.once('exit', () => { running.delete(child) })
  return child
}

export function exited (child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

/** Sends `signal` to the process (by its pid) and waits until it is gone. */
export async function stopProcess (child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
  if (exited(child)) return
  const gone = new Promise<void>((resolve) => { child.once('exit', () => { resolve() }) })
  try { process.kill(child.pid!, signal) } catch { return }
  const timer = setTimeout(() => { try { process.kill(child.pid!, 'SIGKILL') } catch { /* gone */ } }, graceMs)
  await gone
  clearTimeout(timer)
}

/** Thrown by a waitFor check to stop waiting at once (a process died). */
export class GiveUp extends Error {}

/** Polls `check` until it returns true (a failing check counts as false); fails after `timeoutMs` with `what`. */
export async function waitFor (what: string, check: () => Promise<boolean>, timeoutMs = 60_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check().catch((err: unknown) => { if (err instanceof GiveUp) throw err; return false })) return
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
