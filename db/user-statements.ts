/**
 * The users module's table as an operator lists it (records/users/user-admin.ts,
 * bin/users.ts): every live user with the number of sessions still open.
 */
import { queryRows, type Db } from './statement.js'

/** The users module's table and the columns of the fields a listing shows. */
export interface UserListColumns {
  readonly table: string
  readonly username: string
  readonly nombre: string
  readonly rol: string
  readonly activo: string
}

export interface UserListRow {
  readonly _id: string
  readonly username: string
  readonly nombre: string
  readonly rol: string
  readonly activo: boolean | null
  /** Unexpired, unrevoked sessions. */
  readonly sesiones: number
}

/** Every live user, by username, with their open sessions counted. */
export async function liveUsersWithSessions (db: Db, cols: UserListColumns): Promise<UserListRow[]> {
  const rows = await queryRows<Omit<UserListRow, 'sesiones'> & { sesiones: string | number }>(db,
    `select u."_id", u."${cols.username}" as username, u."${cols.nombre}" as nombre, u."${cols.rol}" as rol, u."${cols.activo}" as activo,
       (select count(*) from "sys_sesiones" s where s."usuario" = u."_id" and s."revocado" is null and s."expira" > now()) as sesiones
     from "${cols.table}" u where u."_deleted" is null order by u."${cols.username}"`)
  return rows.map((r) => ({ ...r, sesiones: Number(r.sesiones) }))
}
