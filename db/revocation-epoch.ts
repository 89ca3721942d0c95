/**
 * The revocation epoch (docs/operator-guide.md "Sessions and a Redis restore"): a counter in the database raised in the
 * same transaction as every revocation — a logout, every write to a user —
 * so the database says how many revocations it holds. Redis keeps the epoch
 * its cache has caught up with; an instance that finds Redis behind the
 * database drops the cache (stores/sessions/redis.ts). The counter is a row of
 * `sys_estado` (service state, one row per key): updating it takes a row
 * lock, so epochs are handed out in commit order, and a statement that reads
 * epoch N sees exactly the revocations 1..N.
 */
import { EntitySchema } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'

export interface StateRow {
  clave: string
  valor: string
}

export const StateEntity = new EntitySchema<StateRow>({
  name: 'sys_estado',
  tableName: 'sys_estado',
  properties: {
    clave: { type: 'string', length: 32, primary: true, fieldName: 'clave' },
    valor: { type: 'bigint', fieldName: 'valor' },
  },
})

const KEY = 'revocaciones'

/** The periodic check's statement (tests recognise it, so it never counts against a request's budget). */
export const POLL_SQL = `select coalesce((select "valor" from "sys_estado" where "clave" = '${KEY}'), 0) as "epoch"`

/** Raises the epoch inside the revocation's transaction (`em` is that transaction) and returns the new value. */
export async function raiseRevocationEpoch (em: EntityManager): Promise<number> {
  const rows = await em.getConnection().execute<Array<{ epoch: string }>>(
    `insert into "sys_estado" ("clave", "valor") values ('${KEY}', 1)
     on conflict ("clave") do update set "valor" = "sys_estado"."valor" + 1 returning "valor" as "epoch"`,
    [], 'all', em.getTransactionContext())
  return Number(rows[0]!.epoch)
}

/** The database's current epoch (0 before the first revocation). */
export async function readRevocationEpoch (em: EntityManager): Promise<number> {
  const rows = await em.getConnection().execute<Array<{ epoch: string }>>(POLL_SQL, [], 'all', em.getTransactionContext())
  return Number(rows[0]!.epoch)
}

export interface StoredSession {
  readonly usuario: string
  readonly revocado: Date | null
}

/**
 * A session row and the epoch, read by one statement: the row reflects
 * every revocation up to that epoch (and perhaps later ones), so it may be
 * cached as of that epoch. `session` is null for a jti never issued.
 */
export async function readSessionAtEpoch (em: EntityManager, jti: string): Promise<{ epoch: number, session: StoredSession | null }> {
  const rows = await em.getConnection().execute<Array<{ epoch: string, usuario: string | null, revocado: Date | null }>>(
    `select e."epoch", s."usuario", s."revocado" from (${POLL_SQL}) e left join "sys_sesiones" s on s."jti" = ?`,
    [jti], 'all', em.getTransactionContext())
  const row = rows[0]!
  return { epoch: Number(row.epoch), session: row.usuario === null ? null : { usuario: row.usuario, revocado: row.revocado } }
}
