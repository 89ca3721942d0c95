/**
 * The embedded database for `npm start` without DATABASE_URL: PGlite (real
 * PostgreSQL compiled to WebAssembly) served over a private Unix socket by
 * @electric-sql/pglite-socket, so MikroORM uses the very same PostgreSQL
 * driver and dialect as in production. Data lives in DATA_DIR/pgdata.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm as pgTrgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { unaccent } from '@electric-sql/pglite/contrib/unaccent'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { ConfigError } from '../core/errors.js'

export interface EmbeddedDatabase {
  /** Connection settings for the PostgreSQL driver. */
  readonly host: string
  readonly port: number
  readonly dbName: string
  stop (): Promise<void>
}

/** The file that says which process holds an embedded database folder. */
export const LOCK_FILE = 'policia.pid'

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * PGlite serves one process: a second one opening the same folder (the
 * command line while `npm start` runs) would corrupt it. The folder holds
 * the pid of its process; a live one refuses the second, a dead one (a
 * crash) is taken over.
 */
function lock (dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' })
      return () => { if (readPid(file) === process.pid) rmSync(file, { force: true }) }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = readPid(file)
      if (pid !== undefined && alive(pid)) {
        throw new ConfigError(`the embedded database in ${dataDir} is in use by process ${pid} (npm start, or another command): ` +
          'the embedded database serves one process at a time. Stop that process first (Ctrl-C on npm start, or let the command finish), ' +
          'then run this again and start the service after it; or run the service and the commands on PostgreSQL (DATABASE_URL). ' +
          `If no such process runs, delete ${file}.`)
      }
      rmSync(file, { force: true }) // left by a process that died
    }
  }
  throw new ConfigError(`cannot lock the embedded database in ${dataDir}: delete ${file} and try again`)
}

function readPid (file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * A PGlite with the contrib extensions search needs (db/search-setup.ts
 * creates them in the database). `from`: a data directory as PGlite's
 * `dumpDataDir` wrote it, to start from instead of a new cluster (the
 * tests' throw-away databases start from one fresh cluster's dump).
 * `settings`: PostgreSQL settings as `name=value`, after PGlite's own.
 */
export async function openPGlite (dataDir: string, from?: Blob, settings: readonly string[] = []): Promise<PGlite> {
  return await PGlite.create(dataDir, {
    extensions: { unaccent, pg_trgm: pgTrgm },
    ...(from !== undefined && { loadDataDir: from }),
    ...(settings.length > 0 && { startParams: [...PGlite.defaultStartParams, ...settings.flatMap((s) => ['-c', s])] }),
  })
}

/**
 * Starts PGlite on `dataDir` (a folder, or `memory://` for a throw-away
 * database), from the dump `from` when given, with `settings` (the
 * tests' small `shared_buffers`, test/helpers/services.ts).
 */
export async function startEmbeddedDatabase (dataDir: string, from?: Blob, settings: readonly string[] = []): Promise<EmbeddedDatabase> {
  let unlock = (): void => undefined
  if (!dataDir.startsWith('memory://')) {
    mkdirSync(dataDir, { recursive: true })
    unlock = lock(dataDir)
  }
  let db: PGlite
  try {
    db = await openPGlite(dataDir, from, settings)
  } catch (err) {
    unlock()
    throw err
  }
  // A short private directory: Unix socket paths are limited to ~100 bytes.
  const socketDir = mkdtempSync(join(tmpdir(), 'pgl-'))
  const server = new PGLiteSocketServer({ db, path: join(socketDir, '.s.PGSQL.5432'), maxConnections: 16 })
  await server.start()
  let stopped = false
  return {
    host: socketDir,
    port: 5432,
    dbName: 'postgres',
    async stop () {
      if (stopped) return
      stopped = true
      await server.stop()
      await db.close()
      rmSync(socketDir, { recursive: true, force: true })
      unlock()
    },
  }
}
