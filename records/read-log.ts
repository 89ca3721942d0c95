/**
 * The read log (SPEC S7): every response that carried decrypted sensitive
 * fields leaves one row per record — who, when, which module, record and
 * fields — written before the response is sent. Queryable by superadmin
 * at GET /auditoria/lecturas.
 */
import { ReadLogEntity, type ReadLogRow } from '../db/read-log-entity.js'
import type { EntityManager } from '@mikro-orm/postgresql'

export { ReadLogEntity, type ReadLogRow } from '../db/read-log-entity.js'

export async function logReads (em: EntityManager, entries: ReadLogRow[]): Promise<void> {
  if (entries.length > 0) await em.insertMany(ReadLogEntity, entries)
}
