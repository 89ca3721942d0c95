/**
 * Builds the console (docs/architecture.md "The console") when its bundle
 * is missing or was built from other sources: `npm install` (prepare) and
 * `npm start` (prestart) run it, so a newcomer never builds by hand. The
 * sources' digest (every file under console/ but dist/, and the lock file:
 * a new Preact or Vite rebuilds) is kept beside the bundle.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('.', import.meta.url))
export const CONSOLE_DIST = join(ROOT, 'dist')
const STAMP = join(CONSOLE_DIST, '.fuentes')

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return path === CONSOLE_DIST || e.name === 'node_modules' ? [] : files(path)
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
  await build({ configFile: join(ROOT, 'vite.config.ts') })
  writeFileSync(STAMP, digest)
  return true
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Silent when nothing changed: `npm start` runs it every time.
  if (await ensureConsoleBuilt()) process.stdout.write('Console built in console/dist\n')
}
