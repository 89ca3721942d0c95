/**
 * The embedded database for `npm start` without DATABASE_URL: PGlite (real
 * PostgreSQL compiled to WebAssembly) served over a private Unix socket by
 * @electric-sql/pglite-socket, so MikroORM uses the very same PostgreSQL
 * driver and dialect as in production. Data lives in DATA_DIR/pgdata.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm as pgTrgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { unaccent } from '@electric-sql/pglite/contrib/unaccent'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

export interface EmbeddedDatabase {
  /** Connection settings for the PostgreSQL driver. */
  readonly host: string
  readonly port: number
  readonly dbName: string
  stop (): Promise<void>
}

/** Starts PGlite on `dataDir` (a folder, or `memory://` for a throw-away database). */
export async function startEmbeddedDatabase (dataDir: string): Promise<EmbeddedDatabase> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true })
  // The contrib extensions search needs (db/search-setup.ts creates them in the database).
  const db = await PGlite.create(dataDir, { extensions: { unaccent, pg_trgm: pgTrgm } })
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
    },
  }
}
