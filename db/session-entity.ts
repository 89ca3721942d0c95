/**
 * Issued tokens (by jti). The database keeps every session so a revoked
 * token stays revoked after Redis loses its keys (docs/operator-guide.md "Sessions and a Redis restore"). Holds no secret:
 * a jti cannot be turned into a token. Revoking every session of a user
 * (a password set by someone else, a deactivation, `cerrar-sesiones`,
 * docs/user-guide.md "Accounts and sessions") is one statement here, in the transaction of that change.
 */
import { EntitySchema } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { ormErrors } from './orm-errors.js'
import { runStatement } from './statement.js'

export interface SessionRow {
  jti: string
  usuario: string
  emitido: Date
  expira: Date
  revocado: Date | null
}

export const SessionEntity = new EntitySchema<SessionRow>({
  name: 'sys_sesion',
  tableName: 'sys_sesiones',
  properties: {
    jti: { type: 'string', length: 64, primary: true, fieldName: 'jti' },
    usuario: { type: 'string', length: 40, fieldName: 'usuario', index: true },
    emitido: { type: 'datetime', columnType: 'timestamptz', fieldName: 'emitido' },
    expira: { type: 'datetime', columnType: 'timestamptz', fieldName: 'expira', index: true },
    revocado: { type: 'datetime', columnType: 'timestamptz', fieldName: 'revocado', nullable: true },
  },
})

/** A session just revoked, with what the cache needs to mark it. */
export interface RevokedSession {
  readonly jti: string
  readonly expira: Date
}

/**
 * Revokes every unexpired session of `usuario` but `except` (the one in
 * use, when a user changes their own password), inside the caller's
 * transaction `em` — which also raises the revocation epoch — and returns
 * them, for the cache.
 */
export async function revokeUserSessions (em: EntityManager, usuario: string, except?: string): Promise<RevokedSession[]> {
  const rows = await em.getConnection().execute<Array<{ jti: string, expira: Date }>>(
    `update "sys_sesiones" set "revocado" = now()
     where "usuario" = ? and "revocado" is null and "expira" > now()${except === undefined ? '' : ' and "jti" <> ?'}
     returning "jti", "expira"`,
    except === undefined ? [usuario] : [usuario, except], 'all', em.getTransactionContext())
  return rows.map((r) => ({ jti: r.jti, expira: new Date(r.expira) }))
}

/** Revokes session `jti` (a logout), inside the caller's transaction, which also raises the revocation epoch. */
export async function revokeSession (em: EntityManager, jti: string, at: Date): Promise<void> {
  await ormErrors(em, runStatement(em, 'update "sys_sesiones" set "revocado" = ? where "jti" = ?', [at, jti]))
}

/** Where the users module keeps what a login depends on (records/users/users-table.ts). */
export interface LoginColumns {
  readonly table: string
  readonly activo: string
  readonly password: string
}

/**
 * Records a session issued by a login, only if the user is still as the
 * login found them: live, not deactivated, with the password hash that was
 * verified. The user's row is locked (FOR SHARE) by the same statement, so
 * a deactivation or a password change running at the same moment either
 * commits first (then nothing is inserted: false) or finds this session
 * and revokes it. Without it, a login that verified the old password could
 * add a session just after the change revoked them all.
 */
export async function insertSessionIfCurrent (em: EntityManager, session: SessionRow, cols: LoginColumns, passwordHash: string): Promise<boolean> {
  const q = (name: string): string => `"${name.replaceAll('"', '""')}"`
  const rows = await em.getConnection().execute<Array<{ jti: string }>>(
    `insert into "sys_sesiones" ("jti", "usuario", "emitido", "expira", "revocado")
     select ?, ?, ?, ?, null from ${q(cols.table)} u
     where u."_id" = ? and u."_deleted" is null and u.${q(cols.activo)} is not false and u.${q(cols.password)} = ?
     for share of u
     returning "jti"`,
    [session.jti, session.usuario, session.emitido, session.expira, session.usuario, passwordHash], 'all', em.getTransactionContext())
  return rows.length === 1
}
