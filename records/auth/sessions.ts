/**
 * Logins and sessions without HTTP (docs/user-guide.md "Accounts and
 * sessions", "Rate limits"): a login checked against the lock-out
 * (lockout.ts), the password and the device value (core/device.ts), and
 * recorded as a session; a logout; the caller's own password change; a
 * user's sessions ended or lock-out lifted by an administrator. The route
 * signs the token, logs and answers; what to log it learns through an
 * `AuthReport`.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import type { Db } from '../../db/statement.js'
import { verify as argon2Verify } from '@node-rs/argon2'
import type { AccessTable, Caller } from '../../core/access.js'
import { deviceSigner, type DeviceSigner } from '../../core/device.js'
import { AppError } from '../../core/errors.js'
import { hashPassword, passwordProblem } from '../../core/passwords.js'
import type { FieldDef, Registry } from '../../core/registry/types.js'
import { isCleanText } from '../../core/text.js'
import { formatDateTime } from '../../core/time.js'
import type { Row } from '../../db/module-entity.js'
import { insertSessionIfCurrent } from '../../db/session-entity.js'
import type { AttemptLogStore } from '../../stores/attempt-logs/contract.js'
import type { SessionStore } from '../../stores/sessions/contract.js'
import type { RecordsService } from '../records-service.js'
import type { ModuleStorage, RowGuard } from '../storage/module-storage.js'
import { checkSuperTarget } from '../users/users-policy.js'
import { usersTable, type UsersTable } from '../users/users-table.js'
import { admitLogin, admitPasswordCheck, engaged, forgetAttempt, loginSucceeded, unlockLogin, usernameLockedUntil, type LockKind } from './lockout.js'
import { endSession, endSessions } from './user-sessions.js'

export interface SessionsDeps {
  readonly registry: Registry
  readonly access: AccessTable
  readonly sessions: SessionStore
  readonly attemptLogs: AttemptLogStore
  /** The users module's storage: a new password is a write of the records layer (history, hash chain, users policy). */
  readonly users: ModuleStorage
  /** Keys the device values (core/device.ts). */
  readonly jwtSecret: string
  readonly tokenTtlSeconds: number
  readonly timeZone: string
}

/** What the route logs and counts (docs/user-guide.md "Rate limits"); `username` only when such a user exists. */
export interface AuthReport {
  /** The locks an attempt met (`fresh` false) or a failure filled (`fresh` true). */
  locks (locks: readonly LockKind[], username: string | undefined, fresh: boolean): void
  /** A wrong password, an unknown or a deactivated user. */
  failed (username: string | undefined): void
}

export interface LoginAttempt {
  readonly username: string
  readonly password: string
  /** The device value the client presented, if any (core/device.ts). */
  readonly dispositivo?: string | undefined
  /** The client's address. */
  readonly ip: string
}

export interface LoginResult {
  /** The session's id, for the token the route signs. */
  readonly jti: string
  readonly user: { readonly id: string, readonly username: string, readonly nombre: string, readonly rol: string }
  /** The device value to hand back: the same device id when one was presented. */
  readonly dispositivo: string
}

/** The caller as `GET /me` shows them. */
export interface Me {
  _id: string
  username: string
  nombre: string
  rol: string
  email: unknown
  _created: string
  personal_id: string | null
}

/** A caller acting with a session (an authenticated request): its token's id and expiry (seconds since the epoch). */
export type SessionCaller = Caller & { readonly jti: string, readonly exp: number }

/** The logins of the users module (docs/user-guide.md "Accounts and sessions"). */
export interface Sessions {
  login (em: Db, attempt: LoginAttempt, report: AuthReport): Promise<LoginResult>
  /** Revokes the session the caller acts with. */
  logout (em: Db, caller: SessionCaller): Promise<void>
  /** The caller's user, as `GET /me` shows it. */
  me (em: Db, caller: Caller): Promise<Me>
  /** Checks the current password like a login and sets the new one; the session in use stays. */
  changePassword (em: Db, caller: SessionCaller, ip: string, actual: string, nueva: string, report: AuthReport): Promise<void>
  /** Revokes every session of user `id` (`cerrar-sesiones`); `users` is the users module's records as the caller may see them. */
  endAll (em: Db, users: RecordsService, caller: Caller, id: string): Promise<{ user: string, sessions: number }>
  /** Lifts the lock-out of user `id`'s username (`desbloquear`); returns how many logs held failures. */
  unlock (users: RecordsService, caller: Caller, id: string): Promise<{ user: string, logs: number }>
  /** Whether `username` is locked for every client without a device value, and until when (service date-time), as `GET /usuarios/{id}` shows it. */
  lockStatus (username: string): Promise<LockStatus>
}

/** A user's lock as `GET /usuarios/{id}` answers it (docs/user-guide.md "Rate limits"). */
export interface LockStatus {
  readonly bloqueado: boolean
  readonly bloqueado_hasta: string | null
}

export async function createSessions (deps: SessionsDeps): Promise<Sessions> {
  const table: UsersTable = usersTable(deps.registry)
  const col = table.column
  const passwordField: FieldDef = deps.registry.usersModule.fieldMap.get('password')!
  const hasEmail = deps.registry.usersModule.fieldMap.has('email')
  const devices: DeviceSigner = deviceSigner(deps.jwtSecret)
  // Verified against when the username is unknown, so both cases take as long.
  const dummyHash = await hashPassword(randomBytes(16).toString('hex'))
  const matches = async (hash: string, password: string): Promise<boolean> => argon2Verify(hash, password).catch(() => false)

  /** The user `id` when the caller may act on it: 403, 404 as for an edit; only a superadmin acts on a superadmin. */
  async function target (users: RecordsService, caller: Caller, id: string): Promise<Row> {
    const row = await users.target(id, 'editar')
    checkSuperTarget(deps.access, caller, row[col('rol')])
    return row
  }

  return {
    async login (em, { username, password, dispositivo, ip }, report) {
      // Lock-out first (lockout.ts), known username or not, so a locked
      // attempt costs no database query: the attempt is logged before the
      // password is checked. A device value is taken here on its
      // signature, expiry and username alone.
      const claimed = devices.read(dispositivo, username)
      let admission = await admitLogin(deps.attemptLogs, username, ip, claimed?.id)
      // Refused: no username in the line, which is written before it is known to exist.
      report.locks(admission.locked, undefined, false)
      if (admission.admitted === undefined) throw admission.refused!
      // A username no user can have (control characters) is answered like an unknown one.
      const row = !isCleanText(username) ? null : await table.findLive(em, { [col('username')]: username })
      const stored = (row?.[col('password')] as string | null | undefined) ?? dummyHash
      const known = row === null ? undefined : row[col('username')] as string
      // Issued to another user of that name, or under an older password: it
      // was absent after all (docs/user-guide.md "Rate limits"), and the address rules decide.
      const device = claimed !== undefined && row !== null && devices.holds(claimed, row._id as string, stored) ? claimed : undefined
      if (admission.admitted.viaDevice && device === undefined) {
        await forgetAttempt(deps.attemptLogs, admission.admitted)
        admission = await admitLogin(deps.attemptLogs, username, ip)
        report.locks(admission.locked, undefined, false)
        if (admission.admitted === undefined) throw admission.refused!
      }
      const attempt = admission.admitted
      const ok = await matches(stored, password)
      if (row === null || !ok || row[col('activo')] === false) {
        report.failed(known)
        report.locks(engaged(attempt), known, true)
        throw new AppError('CREDENCIALES_INVALIDAS')
      }
      await loginSucceeded(deps.attemptLogs, attempt)
      const jti = randomUUID()
      const now = new Date()
      const ttl = deps.tokenTtlSeconds
      // Only while the user is still as verified: a deactivation or a new
      // password committed meanwhile leaves no session behind (docs/user-guide.md "Accounts and sessions").
      const session = { jti, usuario: row._id as string, emitido: now, expira: new Date(now.getTime() + ttl * 1000), revocado: null }
      if (!await insertSessionIfCurrent(em, session, table.login, stored)) throw new AppError('CREDENCIALES_INVALIDAS')
      await deps.sessions.putSession(jti, row._id as string, ttl * 1000)
      const me = table.snapshot(row)
      return {
        jti,
        user: { id: me.id, username: me.username, nombre: me.nombre, rol: me.rol },
        // Renewed at each login: the same device id when one was presented.
        dispositivo: devices.issue({ id: me.id, username: known! }, stored, device?.id),
      }
    },

    async logout (em, caller) {
      await endSession(em, deps.sessions, caller.id, caller.jti, caller.exp * 1000)
    },

    async me (em, caller) {
      const row = await table.findLive(em, { _id: caller.id })
      if (row === null) throw new AppError('TOKEN_INVALIDO')
      const { id, username, nombre, rol, personalId } = table.snapshot(row)
      return {
        _id: id,
        username,
        nombre,
        rol,
        email: hasEmail ? (row[col('email')] ?? null) : null,
        _created: formatDateTime(row._created as Date, deps.timeZone),
        personal_id: personalId,
      }
    },

    // The current password is checked like a login — each try is logged in
    // the caller's address log and the session's own first (lockout.ts), so
    // a stolen token cannot be used to guess it — and the new one set
    // through the records layer (history, hash chain; the users policy
    // revokes every other session of the caller, keeping the one in use).
    async changePassword (em, caller, ip, actual, nueva, report) {
      const problem = passwordProblem(nueva, caller.username, passwordField)
      if (problem !== undefined) throw new AppError('DATOS_INVALIDOS', [{ campo: 'password_nueva', mensaje: problem.mensaje }])
      const admission = await admitPasswordCheck(deps.attemptLogs, caller.username, ip, caller.jti)
      report.locks(admission.locked, caller.username, false)
      if (admission.admitted === undefined) throw admission.refused!
      const row = await table.findLive(em, { _id: caller.id })
      if (row === null) throw new AppError('TOKEN_INVALIDO')
      if (!await matches(row[col('password')] as string, actual)) {
        report.failed(caller.username)
        report.locks(engaged(admission.admitted), caller.username, true)
        throw new AppError('CREDENCIALES_INVALIDAS')
      }
      await forgetAttempt(deps.attemptLogs, admission.admitted)
      // The caller's own user, whatever their role's scope on the users module.
      const own: RowGuard = { allows: (r) => r._id === caller.id }
      await deps.users.update(em, caller, caller.id, { [passwordField.name]: nueva }, own)
    },

    async endAll (em, users, caller, id) {
      const row = await target(users, caller, id)
      return { user: row._id as string, sessions: await endSessions(em, deps.sessions, row._id as string) }
    },

    async unlock (users, caller, id) {
      const row = await target(users, caller, id)
      return { user: row._id as string, logs: await unlockLogin(deps.attemptLogs, row[col('username')] as string) }
    },

    async lockStatus (username) {
      const until = await usernameLockedUntil(deps.attemptLogs, username)
      return { bloqueado: until !== undefined, bloqueado_hasta: until === undefined ? null : formatDateTime(until, deps.timeZone) }
    },
  }
}
