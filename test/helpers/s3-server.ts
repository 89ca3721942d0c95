/**
 * A real S3-protocol server for tests (s3rver, over HTTP on loopback, a
 * port below 32768), with its own temporary directory and bucket, removed
 * by `close`. The service reaches it through the AWS SDK as it would AWS
 * or MinIO; the tests read and alter its objects through the SDK too.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import S3rver from 's3rver'
import { freePort } from './free-port.js'

/** s3rver's fixed credentials (it checks the signature with them). */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

export interface S3Server {
  readonly endpoint: string
  readonly bucket: string
  /** The service's environment for this bucket under `prefix`. */
  env (prefix: string): Record<string, string>
  /** Every object key in the bucket, sorted. */
  keys (): Promise<string[]>
  get (key: string): Promise<Buffer>
  put (key: string, bytes: Buffer): Promise<void>
  remove (key: string): Promise<void>
  /** Stops the server as an outage would: every open connection dropped at once (an upload in flight included); its objects kept. */
  stop (): Promise<void>
  /** Starts it again on the same port and objects (after `stop`). */
  restart (): Promise<void>
  close (): Promise<void>
}

async function listening (dir: string, bucket: string, fixedPort?: number): Promise<{ server: S3rver, port: number }> {
  for (let attempt = 0; ; attempt++) {
    // Below the kernel's ephemeral range (test/helpers/free-port.ts).
    const port = fixedPort ?? await freePort()
    const server = new S3rver({ address: '127.0.0.1', port, silent: true, directory: dir, configureBuckets: [{ name: bucket }] })
    try {
      await server.run()
      return { server, port }
    } catch (err) {
      if (attempt >= 20 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
      // The same port again (a restart): its old listener may take a moment to let go.
      if (fixedPort !== undefined) await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

export async function startS3Server (): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 's3rver-test-'))
  const bucket = 'policia-pruebas'
  const first = await listening(dir, bucket)
  const port = first.port
  let server = first.server
  let running = true
  const stop = async (): Promise<void> => {
    if (!running) return
    running = false
    const http = (server as unknown as { httpServer: import('node:http').Server }).httpServer
    const closed = server.close()
    http.closeAllConnections()
    await closed
  }
  const endpoint = `http://127.0.0.1:${port}`
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' })
  return {
    endpoint,
    bucket,
    env: (prefix) => ({
      FILES_S3_BUCKET: bucket,
      FILES_S3_ENDPOINT: endpoint,
      FILES_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      FILES_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      FILES_S3_PREFIX: prefix,
    }),
    async keys () {
      const keys: string[] = []
      let token: string | undefined
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ...(token !== undefined && { ContinuationToken: token }) }))
        keys.push(...(page.Contents ?? []).map((o) => o.Key!))
        token = page.NextContinuationToken
      } while (token !== undefined)
      return keys.sort()
    },
    async get (key) {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      return Buffer.from(await got.Body!.transformToByteArray())
    },
    async put (key, bytes) { await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes })) },
    async remove (key) { await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })) },
    stop,
    async restart () {
      if (running) return
      ;({ server } = await listening(dir, bucket, port))
      running = true
    },
    async close () {
      client.destroy()
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
