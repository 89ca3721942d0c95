/** The file store the configuration names (docs/operator-guide.md "Evidence files"). */
import type { Config } from '../../core/config.js'
import type { FileStore } from './contract.js'
import { DirectoryFileStore } from './directory.js'

export function createFileStore (config: Config): FileStore {
  return new DirectoryFileStore(config.files.dir)
}
