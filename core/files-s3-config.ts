/**
 * FILES_S3_* (docs/operator-guide.md "Evidence files"): the S3-compatible
 * bucket evidence files live in, instead of FILES_DIR. Set FILES_S3_BUCKET
 * to use it; every other FILES_S3_* only refines it, so one of them set
 * without the bucket is a mistake the start names.
 */
import { ConfigError } from './errors.js'

export interface S3FilesConfig {
  readonly bucket: string
  /** An S3-compatible server (MinIO, Ceph, Garage…); undefined: AWS itself. */
  readonly endpoint?: string
  readonly region: string
  /** undefined: the SDK's own chain (AWS_* variables, an instance or pod role). */
  readonly credentials?: { readonly accessKeyId: string, readonly secretAccessKey: string }
  /** bucket in the path (http://host/bucket/key), as most servers other than AWS want. */
  readonly forcePathStyle: boolean
  /** Prepended to every object key: '' or ending in '/'. */
  readonly prefix: string
}

type Env = Record<string, string | undefined>

const NAMES = ['FILES_S3_ENDPOINT', 'FILES_S3_REGION', 'FILES_S3_ACCESS_KEY_ID', 'FILES_S3_SECRET_ACCESS_KEY', 'FILES_S3_FORCE_PATH_STYLE', 'FILES_S3_PREFIX'] as const
/** S3's rule for bucket names (no dots next to each other or to a hyphen is left to the server). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/
const PREFIX = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/?$/

const value = (env: Env, name: string): string | undefined => {
  const raw = (env[name] ?? '').trim()
  return raw === '' ? undefined : raw
}

function endpointOf (raw: string): string {
  let u: URL
  try { u = new URL(raw) } catch { throw new ConfigError(`FILES_S3_ENDPOINT must be the S3 server's URL, such as http://minio:9000 or https://s3.eu-south-2.amazonaws.com (got "${raw}")`) }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`FILES_S3_ENDPOINT must start with http:// or https:// (got "${raw}")`)
  // Keys in the URL would end up in logs: they have variables of their own.
  if (u.username !== '' || u.password !== '') throw new ConfigError('FILES_S3_ENDPOINT must not hold credentials: put them in FILES_S3_ACCESS_KEY_ID and FILES_S3_SECRET_ACCESS_KEY')
  return raw
}

function prefixOf (raw: string | undefined): string {
  if (raw === undefined) return ''
  if (!PREFIX.test(raw) || raw.split('/').some((p) => p === '.' || p === '..')) {
    throw new ConfigError(`FILES_S3_PREFIX must be a key prefix such as policia/archivos (letters, digits, . _ - separated by /; no leading /, no . or .. part) (got "${raw}")`)
  }
  return raw.endsWith('/') ? raw : `${raw}/`
}

/** The bucket FILES_S3_* name, or undefined when FILES_S3_BUCKET is unset (files in FILES_DIR). */
export function s3FilesConfig (env: Env): S3FilesConfig | undefined {
  const bucket = value(env, 'FILES_S3_BUCKET')
  if (bucket === undefined) {
    const stray = NAMES.filter((n) => value(env, n) !== undefined)
    if (stray.length > 0) throw new ConfigError(`${stray.join(', ')} ${stray.length > 1 ? 'are' : 'is'} set but FILES_S3_BUCKET is not: set FILES_S3_BUCKET to the bucket's name to keep evidence files in S3, or unset ${stray.length > 1 ? 'them' : 'it'} to keep them in FILES_DIR`)
    return undefined
  }
  if (!BUCKET.test(bucket)) throw new ConfigError(`FILES_S3_BUCKET must be a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit (got "${bucket}")`)
  if (value(env, 'FILES_DIR') !== undefined) throw new ConfigError('FILES_DIR and FILES_S3_BUCKET are both set: evidence files live in one place; unset FILES_DIR to keep them in the bucket, or FILES_S3_BUCKET to keep them in the directory')
  const accessKeyId = value(env, 'FILES_S3_ACCESS_KEY_ID')
  const secretAccessKey = value(env, 'FILES_S3_SECRET_ACCESS_KEY')
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(`${accessKeyId === undefined ? 'FILES_S3_SECRET_ACCESS_KEY' : 'FILES_S3_ACCESS_KEY_ID'} is set without ${accessKeyId === undefined ? 'FILES_S3_ACCESS_KEY_ID' : 'FILES_S3_SECRET_ACCESS_KEY'}: set both, or neither to use the SDK's own credentials (AWS_* variables, an instance or pod role)`)
  }
  const endpoint = value(env, 'FILES_S3_ENDPOINT')
  const pathStyle = value(env, 'FILES_S3_FORCE_PATH_STYLE')
  if (pathStyle !== undefined && pathStyle !== 'true' && pathStyle !== 'false') throw new ConfigError(`FILES_S3_FORCE_PATH_STYLE must be true or false (got "${pathStyle}")`)
  return Object.freeze({
    bucket,
    ...(endpoint !== undefined && { endpoint: endpointOf(endpoint) }),
    region: value(env, 'FILES_S3_REGION') ?? 'us-east-1',
    ...(accessKeyId !== undefined && secretAccessKey !== undefined && { credentials: Object.freeze({ accessKeyId, secretAccessKey }) }),
    // Servers other than AWS (a FILES_S3_ENDPOINT) mostly serve buckets only in the path.
    forcePathStyle: pathStyle === undefined ? endpoint !== undefined : pathStyle === 'true',
    prefix: prefixOf(value(env, 'FILES_S3_PREFIX')),
  })
}
