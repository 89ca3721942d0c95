/**
 * User management without HTTP (bin/users.ts, docs/administrator-guide.md "User management from the command line"): what an operator
 * with access to the database alone may do to accounts. Every change is a
 * write of the records layer as the service itself (`SISTEMA`, acting with
 * the super role), so it gets its history entry, its place in the hash
 * chain, and the users policy's effects: the revocation epoch raised in
 * the same transaction (running instances drop their cache), sessions
 * revoked on a password set or a deactivation, the password rules.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import { AppError } from '../../core/errors.js'
import { passwordProblem } from '../../core/passwords.js'
import type { ModuleDef, Registry } from '../../core/registry/types.js'
import type { Row } from '../../db/module-entity.js'
import { liveUsersWithSessions } from '../../db/user-statements.js'
import type { AttemptLogStore } from '../../stores/attempt-logs/contract.js'
import { unlockLogin } from '../auth/lockout.js'
import type { RecordsLayer } from '../records-layer.js'
import { usersTable, type UsersTable } from './users-table.js'

export interface UserLine {
  readonly id: string
  readonly username: string
  readonly nombre: string
  readonly rol: string
  readonly activo: boolean
  /** Unexpired, unrevoked sessions. */
  readonly sesiones: number
}

/** What went wrong, for the operator: the message says what to do. */
export class UserAdminError extends Error {}

/** A password for the operator to hand over: 24 characters, 144 random bits. */
export function generatePassword (): string {
  return randomBytes(18).toString('base64url')
}

export class UserAdmin {
  private readonly users: ModuleDef
  private readonly table: UsersTable
  private readonly caller: Caller
  /** The role that holds `*.*` (the first in usuarios.rol). */
  readonly superRole: string

  constructor (private readonly em: Db, private readonly records: RecordsLayer, registry: Registry) {
    this.users = registry.usersModule
    this.table = usersTable(registry)
    const superRole = this.roles().find((r) => records.access.isSuper(r))
    if (superRole === undefined) throw new UserAdminError('modules.yaml: no role in usuarios.rol holds "*.*"; declare one (e.g. superadmin) first')
    this.superRole = superRole
    this.caller = { id: 'SISTEMA', username: 'sistema', rol: superRole, personalId: null }
  }

  roles (): readonly string[] {
    return this.users.fieldMap.get('rol')!.enum ?? []
  }

  async list (): Promise<UserLine[]> {
    const col = this.table.column
    const rows = await liveUsersWithSessions(this.em, { table: this.users.table, username: col('username'), nombre: col('nombre'), rol: col('rol'), activo: col('activo') })
    return rows.map((r) => ({ id: r._id, username: r.username, nombre: r.nombre, rol: r.rol, activo: r.activo !== false, sesiones: r.sesiones }))
  }

  async create (fields: { username: string, nombre: string, rol: string, email?: string, password: string }): Promise<Row> {
    this.checkUsername(fields.username)
    this.checkRole(fields.rol)
    this.checkPassword(fields.password, fields.username)
    if (await this.find(fields.username) !== null) throw new UserAdminError(`a user named "${fields.username}" exists already; choose another username, or use reset-password or activate on it`)
    return this.write(() => this.records.storage(this.users).create({ em: this.em }, this.caller, { ...fields }))
  }

  async setActive (username: string, activo: boolean): Promise<Row> {
    return this.update(username, { activo })
  }

  async setRole (username: string, rol: string): Promise<Row> {
    this.checkRole(rol)
    return this.update(username, { rol })
  }

  async resetPassword (username: string, password: string): Promise<Row> {
    this.checkPassword(password, username)
    return this.update(username, { password })
  }

  /** Lifts every login lock of `username` in `logs` (docs/user-guide.md "Rate limits"); how many logs held failures. */
  async unlock (username: string, logs: AttemptLogStore): Promise<number> {
    const row = await this.find(username)
    if (row === null) throw new UserAdminError(`no user named "${username}" (deleted users do not count); see: npm run users -- list`)
    return unlockLogin(logs, row[this.table.column('username')] as string)
  }

  /** The live user named `username`, or null. */
  async find (username: string): Promise<Row | null> {
    return await this.table.findLive(this.em, { [this.table.column('username')]: username }) as Row | null
  }

  private async update (username: string, body: Record<string, unknown>): Promise<Row> {
    const row = await this.find(username)
    if (row === null) throw new UserAdminError(`no user named "${username}" (deleted users do not count); see: npm run users -- list`)
    return this.write(() => this.records.storage(this.users).update(this.em, this.caller, row._id as string, body, { allows: () => true }))
  }

  private checkUsername (username: string): void {
    const f = this.users.fieldMap.get('username')!
    const ok = (f.minLength === undefined || username.length >= f.minLength) && (f.maxLength === undefined || username.length <= f.maxLength) &&
      (f.pattern === undefined || new RegExp(f.pattern, 'u').test(username))
    if (!ok) throw new UserAdminError(`username "${username}" is not valid: ${f.minLength ?? 1}–${f.maxLength ?? 500} characters${f.pattern === undefined ? '' : ` matching ${f.pattern}`}`)
  }

  private checkRole (rol: string): void {
    if (!this.roles().includes(rol)) throw new UserAdminError(`role "${rol}" does not exist; use one of: ${this.roles().join(', ')}`)
  }

  /** The users policy would refuse it too (in the API's Spanish); said here for the operator. */
  private checkPassword (password: string, username: string): void {
    const problem = passwordProblem(password, username, this.users.fieldMap.get('password')!)
    if (problem !== undefined) throw new UserAdminError(`the password ${problem.operator}; choose another, or leave --password out to have one generated`)
  }

  /** The records layer's refusals, said for the operator. */
  private async write (fn: () => Promise<Row>): Promise<Row> {
    try {
      return await fn()
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      if (err.code === 'REGISTRO_DUPLICADO') throw new UserAdminError('that username is taken; choose another')
      const details = (err.detalles ?? []).map((d) => `${d.campo}: ${d.mensaje}`).join('; ')
      throw new UserAdminError(`refused by the users module's rules (the API's answer: "${err.message}"${details === '' ? '' : `, ${details}`}); correct it and run the command again`)
    }
  }
}
