/**
 * Builds the console (docs/architecture.md "The console") when its bundle
 * is missing or was built from other sources: `npm install` (prepare) and
 * `npm start` (prestart) run it, so a newcomer never builds by hand. The
 * sources' digest (every file under console/ but dist/ and test/, and the lock file:
 * a new Preact or Vite rebuilds) is kept beside the bundle.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('.', import.meta.url))
export const CONSOLE_DIST = join(ROOT, 'dist')
const STAMP = join(CONSOLE_DIST, '.fuentes')
/** The unit tests are no part of the bundle: a changed test rebuilds nothing. */
const TESTS = join(ROOT, 'test')

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return path === CONSOLE_DIST || path === TESTS || e.name === 'node_modules' ? [] : files(path)
    return [path]
  }).sort()
}

function sourcesDigest (): string {
  const hash = createHash('sha256')
  for (const file of [...files(ROOT), join(ROOT, '..', 'package-lock.json')]) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0')
  }
  return hash.digest('hex')
}

/** Builds when needed; true when it built. */
export async function ensureConsoleBuilt (): Promise<boolean> {
  const digest = sourcesDigest()
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === digest) return false
  const { build } = await import('vite')
  // Vite makes a production bundle only under NODE_ENV=production or none; the
  // browser tests build under NODE_ENV=test (a 45 % larger bundle, with
  // Preact's development checks) that `npm start` would then serve. So always
  // production, and this process's NODE_ENV as it was afterwards.
  const nodeEnv = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  try {
    await build({ configFile: join(ROOT, 'vite.config.ts') })
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = nodeEnv
  }
  writeFileSync(STAMP, digest)
  return true
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Silent when nothing changed: `npm start` runs it every time.
  if (await ensureConsoleBuilt()) process.stdout.write('Console built in console/dist\n')
}
