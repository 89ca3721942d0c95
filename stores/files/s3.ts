/**
 * Files in an S3-compatible bucket (FILES_S3_*, docs/operator-guide.md
 * "Evidence files"), laid out as FILES_DIR is: each object at
 * `<prefix><first two characters of its key>/<key>`, so a copy of the
 * prefix made with any sync tool is a files directory (the auditor's
 * script reads one, docs/decisions.md). An upload is streamed to
 * `<prefix>.tmp/<uuid>` (multipart past one part, one part held in memory
 * at a time), then copied to its key and the temporary deleted: a reader
 * sees the whole object or none.
 */
import { randomUUID } from 'node:crypto'
import { PassThrough, type Readable } from 'node:stream'
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import type { S3FilesConfig } from '../../core/files-s3-config.js'
import type { ByteRange, FileStore, StagedFile, StageOptions } from './contract.js'
import { pipeInto, stageInto } from './staging.js'
import { outageOr, storeCall, storeOutageReason } from './unavailable.js'

/** Keys are hex digests or ids (as in directory.ts). */
const KEY = /^[0-9a-zA-Z_-]{8,128}$/
/** S3's smallest multipart part; with one part in flight, what an upload holds in memory. */
const PART_BYTES = 5 * 1024 * 1024

/** Whether an SDK error is "no such object" (HeadObject answers a bare 404). */
function notFound (err: unknown): boolean {
  const e = err as { name?: string, $metadata?: { httpStatusCode?: number } }
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404
}

export class S3FileStore implements FileStore {
  private readonly client: S3Client
  private readonly bucket: string
  private readonly prefix: string

  constructor (private readonly config: S3FilesConfig) {
    this.bucket = config.bucket
    this.prefix = config.prefix
    this.client = new S3Client({
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      ...(config.endpoint !== undefined && { endpoint: config.endpoint }),
      // A copy: the SDK marks the object it is given (the configuration's is frozen).
      ...(config.credentials !== undefined && { credentials: { ...config.credentials } }),
      // The SDK's default (since 3.729) adds CRC32 checksums and aws-chunked
      // bodies to every upload, which many S3-compatible servers (older
      // MinIO, Ceph, s3rver) reject or store with the framing in the object.
      // Integrity is ours anyway: every file's SHA-256 is sealed and rehashed.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    })
  }

  /** The object key of a file key. */
  objectKey (key: string): string {
    if (!KEY.test(key)) throw new Error(`not a file key: ${key}`)
    return `${this.prefix}${key.slice(0, 2)}/${key}`
  }

  async stage (input: Readable, opts: StageOptions): Promise<StagedFile> {
    return storeCall(this.describe(), () => this.stageIn(input, opts))
  }

  private async stageIn (input: Readable, opts: StageOptions): Promise<StagedFile> {
    const temp = `${this.prefix}.tmp/${randomUUID()}`
    const discard = async (): Promise<void> => { await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: temp })) }
    return stageInto(input, opts, {
      write: async (stages) => {
        const body = new PassThrough()
        const upload = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: temp, Body: body }, queueSize: 1, partSize: PART_BYTES, leavePartsOnError: false })
        // The store failing stops the reading too (else the pipeline would wait on a body nobody reads).
        const sent = upload.done().catch((err: unknown) => { body.destroy(err as Error); throw err })
        // Both settle: a failed input ends the body, which ends the upload (its multipart upload aborted).
        const [piped, stored] = await Promise.allSettled([pipeInto(stages, body), sent])
        // The store gone comes first: the pipe then fails only as its consequence (an abort).
        if (stored.status === 'rejected' && storeOutageReason(stored.reason) !== undefined) throw stored.reason
        if (piped.status === 'rejected') throw piped.reason
        if (stored.status === 'rejected') throw stored.reason
      },
      discard,
      commit: (key) => storeCall(this.describe(), async () => {
        // Content-addressed: an object already there holds these very bytes.
        if (await this.size(key) === undefined) {
          await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), CopySource: `${this.bucket}/${temp}` }))
        }
        await discard()
      }),
    })
  }

  async size (key: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }))
      return head.ContentLength
    } catch (err) {
      if (notFound(err)) return undefined
      throw outageOr(err, this.describe())
    }
  }

  async open (key: string, range?: ByteRange): Promise<Readable> {
    // Asked before the answer starts, so a missing object is an error, not a cut stream.
    const got = await storeCall(this.describe(), () => this.client.send(new GetObjectCommand({
      Bucket: this.bucket,
      Key: this.objectKey(key),
      ...(range !== undefined && { Range: `bytes=${range.start}-${range.end}` }),
    })))
    return got.Body as Readable
  }

  close (): void {
    this.client.destroy()
  }

  describe (): string {
    // No credentials: the endpoint is checked to hold none (core/files-s3-config.ts).
    return `s3 ${this.config.endpoint ?? `aws ${this.config.region}`} bucket ${this.bucket}${this.prefix === '' ? '' : ` prefix ${this.prefix}`}`
  }
}
