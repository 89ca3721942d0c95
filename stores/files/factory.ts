/** The file store the configuration names (docs/operator-guide.md "Evidence files"): the bucket of FILES_S3_BUCKET, else FILES_DIR. */
import type { Config } from '../../core/config.js'
import type { FileStore } from './contract.js'
import { DirectoryFileStore } from './directory.js'
import { S3FileStore } from './s3.js'

export function createFileStore (config: Config): FileStore {
  return config.files.s3 !== undefined ? new S3FileStore(config.files.s3) : new DirectoryFileStore(config.files.dir)
}
