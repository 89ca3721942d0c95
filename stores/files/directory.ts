/**
 * Files in a directory (FILES_DIR, docs/operator-guide.md "Evidence
 * files"): each object at `<dir>/<first two characters of its key>/<key>`;
 * an upload is written under `<dir>/.tmp/`, flushed to disk and renamed
 * into place, so a reader never sees half a file. The directory may be
 * shared by several instances (a volume, a ReadWriteMany claim): a rename
 * onto an existing key replaces it with the same bytes (content-addressed).
 */
import { randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, open as openFile, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import type { ByteRange, FileStore, StagedFile, StageOptions } from './contract.js'
import { pipeInto, stageInto } from './staging.js'
import { outageOr, storeCall } from './unavailable.js'

/** Keys are hex digests or ids: nothing that could climb out of the directory. */
const KEY = /^[0-9a-zA-Z_-]{8,128}$/

export class DirectoryFileStore implements FileStore {
  private readonly tmp: string

  constructor (private readonly dir: string) {
    this.tmp = join(dir, '.tmp')
  }

  private pathOf (key: string): string {
    if (!KEY.test(key)) throw new Error(`not a file key: ${key}`)
    return join(this.dir, key.slice(0, 2), key)
  }

  async stage (input: Readable, opts: StageOptions): Promise<StagedFile> {
    return storeCall(this.describe(), () => this.stageIn(input, opts))
  }

  private async stageIn (input: Readable, opts: StageOptions): Promise<StagedFile> {
    await mkdir(this.tmp, { recursive: true })
    const temp = join(this.tmp, randomUUID())
    return stageInto(input, opts, {
      write: async (stages) => {
        await pipeInto(stages, createWriteStream(temp, { flags: 'wx' }))
        const fh = await openFile(temp, 'r+')
        try { await fh.sync() } finally { await fh.close() }
      },
      discard: () => rm(temp, { force: true }),
      commit: (key) => storeCall(this.describe(), async () => {
        const target = this.pathOf(key)
        await mkdir(join(this.dir, key.slice(0, 2)), { recursive: true })
        await rename(temp, target)
      }),
    })
  }

  async size (key: string): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(key))).size
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw outageOr(err, this.describe())
    }
  }

  async open (key: string, range?: ByteRange): Promise<Readable> {
    const path = this.pathOf(key)
    // Opened before the answer starts, so a missing file is an error, not a cut stream.
    const fh = await storeCall(this.describe(), () => openFile(path, 'r'))
    return fh.createReadStream(range !== undefined ? { start: range.start, end: range.end } : {})
  }

  describe (): string {
    return `directory ${this.dir}`
  }
}
