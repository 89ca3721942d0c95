/**
 * The evidence files' back-ends a files test runs on (describe.each over
 * FILE_STORES): a directory (FILES_DIR) or an S3 bucket on a real
 * S3-protocol server (test/helpers/s3-server.ts). Either way the test sees
 * the stored objects by file key, and can alter them as an intruder would.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { startS3Server, type S3Server } from './s3-server.js'
import { startTestApp, type TestApp } from './test-app.js'

export const FILE_STORES = ['directory', 's3'] as const
export type FileStoreKind = typeof FILE_STORES[number]

/** Under this prefix in the bucket: the service's keys must honour FILES_S3_PREFIX. */
const PREFIX = 'policia/archivos/'

export interface TestFileStore {
  /** The service's environment for it (FILES_DIR or FILES_S3_*). */
  readonly env: Record<string, string>
  /** Every stored object, temporary ones included, as paths relative to the store's root (`ab/abcd…`, `.tmp/…`). */
  objects (): Promise<string[]>
  /** The stored bytes of a file key. */
  read (key: string): Promise<Buffer>
  write (key: string, bytes: Buffer): Promise<void>
  remove (key: string): Promise<void>
  /**
   * A files directory for the auditor's script: FILES_DIR itself, or a copy
   * of the bucket's prefix as `aws s3 sync` or `rclone copy` makes it
   * (docs/operator-guide.md "Evidence files"); made anew on each call.
   */
  localCopy (): Promise<string>
  /** The S3 server (an S3 store): to stop and restart it as an outage would. */
  readonly s3?: S3Server
  close (): Promise<void>
}

const relPath = (key: string): string => join(key.slice(0, 2), key)

export async function startFileStore (kind: FileStoreKind): Promise<TestFileStore> {
  const dir = mkdtempSync(join(tmpdir(), 'policia-files-'))
  if (kind === 'directory') {
    return {
      env: { FILES_DIR: dir },
      async objects () {
        if (!existsSync(dir)) return []
        return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => relative(dir, join(d.parentPath, d.name))).sort()
      },
      async read (key) { return readFileSync(join(dir, relPath(key))) },
      async write (key, bytes) { writeFileSync(join(dir, relPath(key)), bytes) },
      async remove (key) { rmSync(join(dir, relPath(key))) },
      async localCopy () { return dir },
      async close () { rmSync(dir, { recursive: true, force: true }) },
    }
  }
  const s3 = await startS3Server()
  // Objects outside the prefix (there should be none) show as `/<key>`, so a comparison sees them too.
  const objects = async (): Promise<string[]> => (await s3.keys()).map((k) => k.startsWith(PREFIX) ? k.slice(PREFIX.length) : `/${k}`)
  return {
    env: s3.env(PREFIX),
    s3,
    objects,
    read: async (key) => s3.get(PREFIX + relPath(key)),
    write: async (key, bytes) => s3.put(PREFIX + relPath(key), bytes),
    remove: async (key) => s3.remove(PREFIX + relPath(key)),
    async localCopy () {
      const copy = mkdtempSync(join(dir, 'copia-'))
      for (const rel of await objects()) {
        if (rel.startsWith('.tmp/') || rel.startsWith('/')) continue
        mkdirSync(join(copy, dirname(rel)), { recursive: true })
        writeFileSync(join(copy, rel), await s3.get(PREFIX + rel))
      }
      return copy
    },
    async close () {
      await s3.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Registers the hooks of a describe block run on `kind`: before its tests,
 * the store and an app on it (`env` over the store's); after, both closed.
 * `use` receives them (to set the test file's variables).
 */
export function onFileStore (kind: FileStoreKind, env: Record<string, string>, use: (t: TestApp & { store: TestFileStore }) => void): void {
  let t: (TestApp & { store: TestFileStore }) | undefined
  beforeAll(async () => {
    const store = await startFileStore(kind)
    t = { ...await startTestApp({ env: { ...store.env, ...env } }), store }
    use(t)
  })
  afterAll(async () => {
    await t?.h.close()
    await t?.store.close()
  })
}
