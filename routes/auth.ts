/**
 * POST /auth/login, POST /auth/logout, GET /me and PUT /me/password
 * (docs/user-guide.md "Accounts and sessions"): the HTTP side only — the
 * schemas, the token signed with @fastify/jwt, the log lines and metrics,
 * the answer. The lock-out, the password checks and the sessions are the
 * sessions service's (records/auth/sessions.ts, `app.sessions`).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { AppError, MESSAGES } from '../core/errors.js'
import { envelope } from '../http/schemas.js'
import { DEVICE_MAX_AGE_MS, DEVICE_MAX_LENGTH } from '../core/device.js'
import { deviceCookie, readDeviceCookie } from '../http/device-cookie.js'
import type { AuthReport } from '../records/auth/sessions.js'

const DEVICE_MAX_AGE_DAYS = DEVICE_MAX_AGE_MS / 86_400_000
const DISPOSITIVO = 'Valor opaco de este cliente (dispositivo de confianza): lo da cada inicio de sesión correcto; presentado en el siguiente, los intentos fallidos desde otros clientes no lo bloquean. Uno inválido, caducado o de otro usuario se ignora.'
const LoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 64 }),
  password: Type.String({ minLength: 1, maxLength: 256 }),
  dispositivo: Type.Optional(Type.String({ maxLength: DEVICE_MAX_LENGTH, description: `${DISPOSITIVO} Sin él, se toma el de la cookie que dejó recordar_dispositivo para este usuario.` })),
  recordar_dispositivo: Type.Optional(Type.Boolean({ description: 'true: la respuesta guarda además el valor de dispositivo en una cookie HttpOnly, SameSite=Strict, solo para /auth/login y este usuario, que el navegador presenta en el siguiente inicio de sesión (la consola)' })),
}, { additionalProperties: false })

const LoginUser = Type.Object({ id: Type.String(), username: Type.String(), nombre: Type.String(), rol: Type.String() })
const Me = Type.Object({
  _id: Type.String(), username: Type.String(), nombre: Type.String(), rol: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]), _created: Type.String(),
  personal_id: Type.Union([Type.String(), Type.Null()], { description: 'Ficha de personal vinculada (decide qué registros son propios)' }),
  lecturas: Type.Boolean({ description: 'true: puede consultar el registro de lecturas (GET /auditoria/lecturas), también los accesos a un registro' }),
  proteccion_datos: Type.Boolean({ description: 'true: su rol es de delegado de protección de datos (proteccion_datos en modules.yaml)' }),
})

async function authRoutes (app: FastifyInstance): Promise<void> {
  const tags = ['Autenticación']

  /**
   * Logs the locks a failure filled (`fresh`: warn, and counted in the
   * metrics) or an attempt met (info), docs/user-guide.md "Rate limits"; the username only when
   * such a user exists (a password typed into the username box must not
   * reach the log). `failed` logs a refused password as `failed` says.
   */
  const reportTo = (request: FastifyRequest, failed: AuthReport['failed']): AuthReport => ({
    locks (locks, username, fresh) {
      for (const lock of locks) {
        const who = { ...(username !== undefined && { username }), address: request.ip, lock }
        if (fresh) {
          request.log.warn(who, 'login locked out')
          app.countLoginLockout(lock)
        } else {
          request.log.info(who, 'login lock-out in force')
        }
      }
    },
    failed,
  })

  app.post('/auth/login', {
    // 401 Credenciales inválidas; 429 for a locked-out username (docs/user-guide.md "Rate limits").
    config: {
      public: true,
      openapi: {
        errors: [401, 429],
        successHeaders: { 'Set-Cookie': { description: 'Solo con recordar_dispositivo: el valor de dispositivo en la cookie policia_dispositivo_<usuario en base64url>; Path=/auth/login; HttpOnly; SameSite=Strict (Secure por https)', required: false, schema: { type: 'string', pattern: '^policia_dispositivo_[A-Za-z0-9_-]+=' } } },
      },
    },
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
  }, async (request, reply) => {
    const body = request.body as { username: string, password: string, dispositivo?: string, recordar_dispositivo?: boolean }
    const { username, password } = body
    // The body's value first; else the one a browser kept for this username (http/device-cookie.ts).
    const dispositivo = body.dispositivo ?? readDeviceCookie(request.headers.cookie, username)
    const report = reportTo(request, (known) => { request.log.info(known === undefined ? {} : { username: known }, 'login failed') })
    const { jti, user, dispositivo: value } = await app.sessions.login(request.em, { username, password, dispositivo, ip: request.ip }, report)
    const token = app.jwt.sign({ sub: user.id, jti })
    request.log.info({ user: user.id }, 'login')
    if (body.recordar_dispositivo === true) reply.header('set-cookie', deviceCookie(username, value, DEVICE_MAX_AGE_MS / 1000, request.protocol === 'https'))
    return { success: true, data: { token, user, dispositivo: value } }
  })

  app.post('/auth/logout', {
    schema: { tags, summary: 'Cerrar sesión (revoca el token)', operationId: 'logout', response: { 200: envelope(Type.Object({ message: Type.String() })) } },
  }, async (request) => {
    await app.sessions.logout(request.em, request.caller)
    return { success: true, data: { message: MESSAGES.SESION_CERRADA } }
  })

  // PUT /me/password (docs/user-guide.md "Accounts and sessions"; records/auth/sessions.ts).
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
    const report = reportTo(request, () => { request.log.info({ user: caller.id }, 'password change: wrong current password') })
    await app.sessions.changePassword(request.em, caller, request.ip, actual, nueva, report)
    request.log.info({ user: caller.id }, 'password changed')
    return { success: true, data: { message: MESSAGES.CONTRASENA_CAMBIADA } }
  })

  app.get('/me', {
    schema: { tags, summary: 'Usuario actual', operationId: 'getMe', response: { 200: envelope(Me) } },
  }, async (request) => {
    const { rol } = request.caller
    return { success: true, data: { ...await app.sessions.me(request.em, request.caller), lecturas: app.access.readsLog(rol), proteccion_datos: app.access.protectsData(rol) } }
  })
}

export default fp(authRoutes, { name: 'policia-auth-routes', fastify: '5.x', dependencies: ['policia-auth', 'policia-sessions', 'policia-metrics'] })
