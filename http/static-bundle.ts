/**
 * A built front-end bundle held in memory (the console, plugins/console.ts):
 * every file of a folder read once at start with its type, a strong ETag and
 * its gzip form, so a request costs no disk read and no compression.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, extname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

export interface BundleFile {
  readonly body: Buffer
  readonly gzip: Buffer
  readonly type: string
  readonly etag: string
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
}

/** The folder holding the package.json above this file: the repository, or the image's /app (compiled code runs from dist/). */
export function packageRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

/** Every file under `dir` (hidden ones left out) by its path relative to it, `/`-separated; undefined when `dir` is missing. */
export function loadBundle (dir: string): Map<string, BundleFile> | undefined {
  if (!existsSync(join(dir, 'index.html'))) return undefined
  const files = new Map<string, BundleFile>()
  const walk = (at: string): void => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue
      const path = join(at, e.name)
      if (e.isDirectory()) { walk(path); continue }
      const body = readFileSync(path)
      files.set(relative(dir, path).split('\\').join('/'), {
        body,
        gzip: gzipSync(body, { level: 9 }),
        type: TYPES[extname(e.name)] ?? 'application/octet-stream',
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      })
    }
  }
  walk(dir)
  return files
}
