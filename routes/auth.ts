/** POST /auth/login, POST /auth/logout, GET /me (interface "Endpoints") and PUT /me/password (docs/user-guide.md "Accounts and sessions"). */
import fp from 'fastify-plugin'
import { randomBytes, randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { verify as argon2Verify } from '@node-rs/argon2'
import { AppError, MESSAGES } from '../core/errors.js'
import { formatDateTime } from '../core/time.js'
import { isCleanText } from '../core/text.js'
import { passwordProblem } from '../core/passwords.js'
import { envelope } from '../http/schemas.js'
import { hashPassword } from '../records/record-service.js'
import { SessionEntity, insertSessionIfCurrent } from '../db/session-entity.js'
import { usersTable } from '../records/users/users-table.js'
import { DEVICE_MAX_AGE_MS, DEVICE_MAX_LENGTH, deviceSigner } from '../core/device.js'
import { admitLogin, admitPasswordCheck, engaged, forgetAttempt, loginSucceeded, type LockKind } from '../http/login-lockout.js'
import { raiseRevocationEpoch } from '../db/revocation-epoch.js'
import { inTransaction } from '../db/transaction.js'

const DEVICE_MAX_AGE_DAYS = DEVICE_MAX_AGE_MS / 86_400_000
const DISPOSITIVO = 'Valor opaco de este cliente (dispositivo de confianza): lo da cada inicio de sesión correcto; presentado en el siguiente, los intentos fallidos desde otros clientes no lo bloquean. Uno inválido, caducado o de otro usuario se ignora.'
const LoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 64 }),
  password: Type.String({ minLength: 1, maxLength: 256 }),
  dispositivo: Type.Optional(Type.String({ maxLength: DEVICE_MAX_LENGTH, description: DISPOSITIVO })),
}, { additionalProperties: false })

const LoginUser = Type.Object({ id: Type.String(), username: Type.String(), nombre: Type.String(), rol: Type.String() })
const Me = Type.Object({
  _id: Type.String(), username: Type.String(), nombre: Type.String(), rol: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]), _created: Type.String(),
  personal_id: Type.Union([Type.String(), Type.Null()], { description: 'Ficha de personal vinculada (decide qué registros son propios)' }),
})

async function authRoutes (app: FastifyInstance): Promise<void> {
  const users = usersTable(app.registry)
  const col = users.column
  const hasEmail = app.registry.usersModule.fieldMap.has('email')
  // Verified against when the username is unknown, so both cases take as long.
  const dummyHash = await hashPassword(randomBytes(16).toString('hex'))
  const tags = ['Autenticación']
  const devices = deviceSigner(app.config.jwtSecret)

  /**
   * Logs the locks a failure filled (`fresh`: warn, and counted in the
   * metrics) or an attempt met (info), docs/user-guide.md "Rate limits"; the username only when
   * such a user exists (a password typed into the username box must not
   * reach the log).
   */
  const report = (request: FastifyRequest, locks: readonly LockKind[], username: string | undefined, fresh: boolean): void => {
    for (const lock of locks) {
      const who = { ...(username !== undefined && { username }), address: request.ip, lock }
      if (fresh) {
        request.log.warn(who, 'login locked out')
        app.countLoginLockout(lock)
      } else {
        request.log.info(who, 'login lock-out in force')
      }
    }
  }

  app.post('/auth/login', {
    // 401 Credenciales inválidas; 429 for a locked-out username (docs/user-guide.md "Rate limits").
    config: { public: true, openapi: { errors: [401, 429] } },
    // Missing body or credentials: `Datos requeridos` (docs/user-guide.md "Errors"), before type checks.
    preValidation: async (request) => {
      const body = request.body as Record<string, unknown> | undefined | null
      if (body === undefined || body === null) throw new AppError('DATOS_REQUERIDOS', [{ campo: 'username', mensaje: 'es obligatorio' }, { campo: 'password', mensaje: 'es obligatorio' }])
      if (typeof body === 'object' && !Array.isArray(body)) {
        const missing = ['username', 'password'].filter((k) => body[k] === undefined || body[k] === null)
        if (missing.length > 0) throw new AppError('DATOS_REQUERIDOS', missing.map((campo) => ({ campo, mensaje: 'es obligatorio' })))
      }
    },
    schema: { tags, summary: 'Iniciar sesión', operationId: 'login', body: LoginBody, response: { 200: envelope(Type.Object({ token: Type.String(), user: LoginUser, dispositivo: Type.String({ description: `${DISPOSITIVO} Caduca a los ${DEVICE_MAX_AGE_DAYS} días, o antes si cambia la contraseña; guárdelo (la consola, en una cookie httpOnly) y sustitúyalo por el nuevo en cada inicio de sesión.` }) })) } },
  }, async (request) => {
    const { username, password, dispositivo } = request.body as { username: string, password: string, dispositivo?: string }
    // Lock-out first (http/login-lockout.ts), known username or not, so a
    // locked attempt costs no database query: the attempt is logged before
    // the password is checked. A device value is taken here on its
    // signature, expiry and username alone.
    const claimed = devices.read(dispositivo, username)
    let admission = await admitLogin(app.stores.attemptLogs, username, request.ip, claimed?.id)
    // Refused: no username in the line, which is written before it is known to exist.
    report(request, admission.locked, undefined, false)
    if (admission.admitted === undefined) throw admission.refused!
    // A username no user can have (control characters) is answered like an unknown one.
    const row = !isCleanText(username) ? null : await users.findLive(request.em, { [col('username')]: username })
    const stored = (row?.[col('password')] as string | null | undefined) ?? dummyHash
    const known = row === null ? undefined : row[col('username')] as string
    // Issued to another user of that name, or under an older password: it
    // was absent after all (docs/user-guide.md "Rate limits"), and the address rules decide.
    const device = claimed !== undefined && row !== null && devices.holds(claimed, row._id as string, stored) ? claimed : undefined
    if (admission.admitted.viaDevice && device === undefined) {
      await forgetAttempt(app.stores.attemptLogs, admission.admitted)
      admission = await admitLogin(app.stores.attemptLogs, username, request.ip)
      report(request, admission.locked, undefined, false)
      if (admission.admitted === undefined) throw admission.refused!
    }
    const attempt = admission.admitted
    const ok = await argon2Verify(stored, password).catch(() => false)
    if (row === null || !ok || row[col('activo')] === false) {
      request.log.info(known === undefined ? {} : { username: known }, 'login failed')
      report(request, engaged(attempt), known, true)
      throw new AppError('CREDENCIALES_INVALIDAS')
    }
    await loginSucceeded(app.stores.attemptLogs, attempt)
    const jti = randomUUID()
    const now = new Date()
    const ttl = app.config.tokenTtlSeconds
    // Only while the user is still as verified: a deactivation or a new
    // password committed meanwhile leaves no session behind (docs/user-guide.md "Accounts and sessions").
    const session = { jti, usuario: row._id as string, emitido: now, expira: new Date(now.getTime() + ttl * 1000), revocado: null }
    if (!await insertSessionIfCurrent(request.em, session, users.login, stored)) throw new AppError('CREDENCIALES_INVALIDAS')
    await app.stores.sessions.putSession(jti, row._id as string, ttl * 1000)
    const token = app.jwt.sign({ sub: row._id as string, jti })
    request.log.info({ user: row._id }, 'login')
    const me = users.snapshot(row)
    // Renewed at each login: the same device id when one was presented.
    const value = devices.issue({ id: me.id, username: known! }, stored, device?.id)
    return {
      success: true,
      data: { token, user: { id: me.id, username: me.username, nombre: me.nombre, rol: me.rol }, dispositivo: value },
    }
  })

  app.post('/auth/logout', {
    schema: { tags, summary: 'Cerrar sesión (revoca el token)', operationId: 'logout', response: { 200: envelope(Type.Object({ message: Type.String() })) } },
  }, async (request) => {
    const { jti, exp, id } = request.caller
    // The database first (the authority), with the revocation epoch in the
    // same transaction; then the cache, which learns the epoch with it.
    const epoch = await inTransaction(request.em, async (tem) => {
      await tem.nativeUpdate(SessionEntity, { jti }, { revocado: new Date() })
      return raiseRevocationEpoch(tem)
    })
    await app.stores.sessions.revokeSession(jti, id, exp * 1000 - Date.now(), epoch)
    return { success: true, data: { message: MESSAGES.SESION_CERRADA } }
  })

  // PUT /me/password (docs/user-guide.md "Accounts and sessions"): the current password is checked like a
  // login — each try is logged in the caller's address log and the
  // session's own first (http/login-lockout.ts), so a stolen token cannot
  // be used to guess it — and the new one set through
  // the records layer (history, hash chain; the users policy revokes every
  // other session of the caller, keeping the one in use).
  const passwordField = app.registry.usersModule.fieldMap.get('password')!
  const PasswordBody = Type.Object({
    password_actual: Type.String({ minLength: 1, maxLength: passwordField.maxLength ?? 256, writeOnly: true, description: 'Contraseña actual' }),
    password_nueva: Type.String({
      minLength: passwordField.minLength ?? 1,
      maxLength: passwordField.maxLength ?? 256,
      writeOnly: true,
      description: 'Contraseña nueva: ni un ejemplo de la documentación ni el nombre de usuario',
    }),
  }, { additionalProperties: false })
  app.put('/me/password', {
    preValidation: async (request) => {
      const body = request.body as Record<string, unknown> | undefined | null
      const missing = ['password_actual', 'password_nueva'].filter((k) => body === undefined || body === null || (typeof body === 'object' && (body[k] === undefined || body[k] === null)))
      if (missing.length > 0) throw new AppError('DATOS_REQUERIDOS', missing.map((campo) => ({ campo, mensaje: 'es obligatorio' })))
    },
    schema: {
      tags,
      summary: 'Cambiar la contraseña propia (cierra las demás sesiones)',
      operationId: 'changeMyPassword',
      description: 'Comprueba la contraseña actual (401 `Credenciales inválidas` si no coincide; cuenta como intento fallido de inicio de sesión) y revoca todas las demás sesiones del usuario; la sesión en uso sigue válida.',
      body: PasswordBody,
      response: { 200: envelope(Type.Object({ message: Type.String() })) },
    },
  }, async (request) => {
    const { password_actual: actual, password_nueva: nueva } = request.body as { password_actual: string, password_nueva: string }
    const caller = request.caller
    const problem = passwordProblem(nueva, caller.username, passwordField)
    if (problem !== undefined) throw new AppError('DATOS_INVALIDOS', [{ campo: 'password_nueva', mensaje: problem.mensaje }])
    const admission = await admitPasswordCheck(app.stores.attemptLogs, caller.username, request.ip, caller.jti)
    report(request, admission.locked, caller.username, false)
    if (admission.admitted === undefined) throw admission.refused!
    const row = await users.findLive(request.em, { _id: caller.id })
    if (row === null) throw new AppError('TOKEN_INVALIDO')
    if (!await argon2Verify(row[col('password')] as string, actual).catch(() => false)) {
      request.log.info({ user: caller.id }, 'password change: wrong current password')
      report(request, engaged(admission.admitted), caller.username, true)
      throw new AppError('CREDENCIALES_INVALIDAS')
    }
    await forgetAttempt(app.stores.attemptLogs, admission.admitted)
    await app.records.storage(app.registry.usersModule).update(request.em, caller, caller.id, { [passwordField.name]: nueva }, { allows: () => true })
    request.log.info({ user: caller.id }, 'password changed')
    return { success: true, data: { message: MESSAGES.CONTRASENA_CAMBIADA } }
  })

  app.get('/me', {
    schema: { tags, summary: 'Usuario actual', operationId: 'getMe', response: { 200: envelope(Me) } },
  }, async (request) => {
    const row = await users.findLive(request.em, { _id: request.caller.id })
    if (row === null) throw new AppError('TOKEN_INVALIDO')
    const { id, username, nombre, rol, personalId } = users.snapshot(row)
    return {
      success: true,
      data: {
        _id: id,
        username,
        nombre,
        rol,
        email: hasEmail ? (row[col('email')] ?? null) : null,
        _created: formatDateTime(row._created as Date, app.config.timeZone),
        personal_id: personalId,
      },
    }
  })
}

export default fp(authRoutes, { name: 'policia-auth-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-records', 'policia-metrics'] })
