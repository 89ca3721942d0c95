/**
 * Where an import keeps its validated records between reading the body and
 * writing them (docs/user-guide.md "Import (importar)"): a temporary file,
 * not memory, so an instance holds a few MB whatever the import's size,
 * and no database connection is held while a client is still sending.
 * The file is encrypted (AES-256-GCM) with a key that lives only in this
 * object, so a DNI never lies in the clear on disk, and a file changed
 * under the import fails its authentication tag before the commit; it is
 * removed when the import ends (docs/operator-guide.md "Importing
 * records (npm run import)": TMPDIR needs room for about the body's size).
 */
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCM } from 'node:crypto'
import { once } from 'node:events'
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { DETAILS, UnavailableError } from '../core/errors.js'
import type { ColumnValue } from '../core/field-types/types.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import type { NewRecord } from './storage/module-storage.js'
import { RETRY_AFTER_S, storeOutageReason } from '../stores/files/unavailable.js'

/** One record as a line: its row and each field's value by name, a Date as its milliseconds with the mark 1. */
type Spooled = [fila: number, values: Array<[name: string, value: unknown, date?: 1]>]

export class ImportSpool {
  private written = 0
  private tag: Buffer | undefined
  private closed: Promise<void> | undefined
  /** The file's first failure (a full TMPDIR): the next append or read throws it. */
  private failure: unknown
  /** Settles at the first failure: what a wait for the file also waits on. */
  private readonly broken: Promise<void>
  private fail!: () => void

  private constructor (
    private readonly mod: ModuleDef,
    private readonly dir: string,
    private readonly key: Buffer,
    private readonly iv: Buffer,
    private readonly cipher: CipherGCM,
    private readonly file: WriteStream,
  ) {
    this.broken = new Promise<void>((resolve) => { this.fail = resolve })
  }

  static async open (mod: ModuleDef): Promise<ImportSpool> {
    let dir: string
    try {
      dir = await mkdtemp(join(tmpdir(), 'policia-import-'))
    } catch (err) {
      throw unavailable(err)
    }
    const key = randomBytes(32)
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    const file = createWriteStream(join(dir, 'records'), { mode: 0o600 })
    cipher.pipe(file)
    const spool = new ImportSpool(mod, dir, key, iv, cipher, file)
    // Listened to, so a failure (or a write after remove()) is the import's error, never an uncaught one.
    const failed = (err: unknown): void => { spool.failure ??= err; spool.fail() }
    file.on('error', failed)
    cipher.on('error', failed)
    return spool
  }

  /** Records kept so far. */
  get size (): number { return this.written }

  async append (records: readonly NewRecord[]): Promise<void> {
    if (this.closed !== undefined) throw new Error('import spool already read')
    let text = ''
    for (const r of records) {
      const values: Spooled[1] = []
      for (const [f, v] of r.values) values.push(v instanceof Date ? [f.name, v.getTime(), 1] : [f.name, v])
      text += JSON.stringify([r.fila, values] satisfies Spooled) + '\n'
    }
    this.written += records.length
    this.check()
    if (!this.cipher.write(text)) await Promise.race([once(this.cipher, 'drain').catch(() => undefined), this.broken])
    this.check()
  }

  /** The records in the order appended, `size` at a time; may be read again from the start. */
  async * batches (size: number): AsyncGenerator<NewRecord[]> {
    await this.close()
    this.check()
    const decipher = createDecipheriv('aes-256-gcm', this.key, this.iv)
    decipher.setAuthTag(this.tag!)
    const lines = createInterface({ input: createReadStream(join(this.dir, 'records')).pipe(decipher), crlfDelay: Infinity })
    let batch: NewRecord[] = []
    for await (const line of lines) {
      batch.push(this.parse(line))
      if (batch.length >= size) { yield batch; batch = [] }
    }
    if (batch.length > 0) yield batch
  }

  /** Deletes the file (idempotent). */
  async remove (): Promise<void> {
    if (this.closed === undefined) { this.cipher.unpipe(this.file); this.cipher.destroy(); this.file.destroy() }
    await rm(this.dir, { recursive: true, force: true })
  }

  private async close (): Promise<void> {
    this.closed ??= (async () => {
      const flushed = Promise.race([once(this.file, 'finish').catch(() => undefined), this.broken])
      this.cipher.end()
      await flushed
      this.tag = this.cipher.getAuthTag()
    })()
    await this.closed
  }

  private check (): void {
    if (this.failure !== undefined) throw unavailable(this.failure)
  }

  private parse (line: string): NewRecord {
    const [fila, stored] = JSON.parse(line) as Spooled
    const values = new Map<FieldDef, ColumnValue>()
    for (const [name, v, date] of stored) values.set(this.mod.fieldMap.get(name)!, date === 1 ? new Date(v as number) : v as ColumnValue)
    return { fila, values }
  }
}

/**
 * A TMPDIR that is full, missing or not writable is the server's outage,
 * never the client's fault: 503 with Retry-After, as a full file store
 * (docs/operator-guide.md "Importing records (npm run import)").
 */
function unavailable (err: unknown): UnavailableError {
  const reason = storeOutageReason(err) ?? ((err as { code?: unknown }).code as string | undefined) ?? String(err)
  return new UnavailableError('importacion', 'import spool (TMPDIR)', reason, [{ campo: 'body', mensaje: DETAILS.IMPORTACION_SIN_ESPACIO }], RETRY_AFTER_S)
}
