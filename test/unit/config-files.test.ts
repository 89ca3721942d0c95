/**
 * Where evidence files live (docs/operator-guide.md "Evidence files"):
 * FILES_DIR, or the bucket of FILES_S3_*. Every refusal is a ConfigError
 * that names the variable and the fix; the store's description (logged)
 * never holds the secret key.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../core/config.js'
import { ConfigError } from '../../core/errors.js'
import { createFileStore } from '../../stores/files/factory.js'

const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'policia-config-files-')); dirs.push(d); return d }
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

const SECRETS = { JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }
const load = (env: Record<string, string>): ReturnType<typeof loadConfig> => loadConfig({ DATA_DIR: tmp(), ...SECRETS, ...env })

function refusal (env: Record<string, string>): string {
  try { load(env) } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as Error).message
  }
  throw new Error('loadConfig accepted it')
}

describe('FILES_S3_*', () => {
  it('unset: files in FILES_DIR (DATA_DIR/archivos by default), no bucket', () => {
    const c = load({})
    expect(c.files.s3).toBeUndefined()
    expect(c.files.dir.endsWith('archivos')).toBe(true)
    expect(createFileStore(c).describe()).toMatch(/^directory /)
  })

  it('a bucket on an S3-compatible server: path style by default, prefix ending in /, keys kept out of describe()', () => {
    const c = load({ FILES_S3_BUCKET: 'policia-archivos', FILES_S3_ENDPOINT: 'http://minio:9000', FILES_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE', FILES_S3_SECRET_ACCESS_KEY: 'muy-secreta-123', FILES_S3_PREFIX: 'policia/archivos' })
    expect(c.files.s3).toEqual({ bucket: 'policia-archivos', endpoint: 'http://minio:9000', region: 'us-east-1', credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'muy-secreta-123' }, forcePathStyle: true, prefix: 'policia/archivos/' })
    const store = createFileStore(c)
    expect(store.describe()).toBe('s3 http://minio:9000 bucket policia-archivos prefix policia/archivos/')
    expect(store.describe()).not.toContain('muy-secreta')
    store.close?.()
  })

  it('AWS itself: virtual-host style, the SDK\'s own credentials, the region given', () => {
    const c = load({ FILES_S3_BUCKET: 'policia-archivos', FILES_S3_REGION: 'eu-south-2' })
    expect(c.files.s3).toEqual({ bucket: 'policia-archivos', region: 'eu-south-2', forcePathStyle: false, prefix: '' })
    expect(load({ FILES_S3_BUCKET: 'b-1', FILES_S3_ENDPOINT: 'http://minio:9000', FILES_S3_FORCE_PATH_STYLE: 'false' }).files.s3?.forcePathStyle).toBe(false)
  })

  it.each([
    [{ FILES_S3_ENDPOINT: 'http://minio:9000' }, /^FILES_S3_ENDPOINT is set but FILES_S3_BUCKET is not: set FILES_S3_BUCKET .* or unset it to keep them in FILES_DIR/],
    [{ FILES_S3_BUCKET: 'Policia_Archivos' }, /^FILES_S3_BUCKET must be a bucket name: 3 to 63 lower-case letters/],
    [{ FILES_S3_BUCKET: 'policia', FILES_DIR: '/srv/archivos' }, /^FILES_DIR and FILES_S3_BUCKET are both set: .*unset FILES_DIR to keep them in the bucket/],
    [{ FILES_S3_BUCKET: 'policia', FILES_S3_ACCESS_KEY_ID: 'AKIA' }, /^FILES_S3_ACCESS_KEY_ID is set without FILES_S3_SECRET_ACCESS_KEY: set both, or neither/],
    [{ FILES_S3_BUCKET: 'policia', FILES_S3_ENDPOINT: 'minio:9000' }, /^FILES_S3_ENDPOINT must start with http:\/\/ or https:\/\//],
    [{ FILES_S3_BUCKET: 'policia', FILES_S3_ENDPOINT: 'http://user:secret@minio:9000' }, /^FILES_S3_ENDPOINT must not hold credentials: put them in FILES_S3_ACCESS_KEY_ID/],
    [{ FILES_S3_BUCKET: 'policia', FILES_S3_FORCE_PATH_STYLE: 'yes' }, /^FILES_S3_FORCE_PATH_STYLE must be true or false/],
    [{ FILES_S3_BUCKET: 'policia', FILES_S3_PREFIX: '/archivos/../x' }, /^FILES_S3_PREFIX must be a key prefix such as policia\/archivos/],
  ])('refuses %o, naming the fix', (env, message) => {
    expect(refusal(env)).toMatch(message)
  })
})
