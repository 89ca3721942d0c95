/**
 * Bearer-token authentication (SPEC S8) and rate limits (S10). Every route
 * but /health and /ready passes through one onRequest hook that counts the
 * request against the IP (and token) limits and, except on the public
 * routes (login, docs), verifies the JWT (HS256 only), checks its session is
 * not revoked and loads the caller's current role and `activo` flag. The
 * counters and both answers come from the stores in one round trip; the
 * database answers only a miss.
 */
import fp from 'fastify-plugin'
import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AppError } from '../core/errors.js'
import type { Caller } from '../core/access.js'
import { SessionEntity, type SessionRow } from '../db/session-entity.js'
import { usersTable } from '../records/users/users-table.js'
import type { SessionLookup, UserSnapshot } from '../stores/types.js'
import { enforce, ipLimit, tokenLimit } from '../http/rate-limit.js'

export interface TokenClaims {
  sub: string
  jti: string
  iat: number
  exp: number
}

export interface AuthenticatedCaller extends Caller {
  readonly nombre: string
  readonly jti: string
  /** Token expiry, seconds since the epoch. */
  readonly exp: number
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: { sub: string, jti: string }
    user: TokenClaims
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: AuthenticatedCaller
  }
  interface FastifyInstance {
    /** The current state of a user as authentication sees it, or null when unknown/deleted. */
    loadUser (em: EntityManager, id: string): Promise<UserSnapshot | null>
  }
}

/** How long a user snapshot may stay cached; writes to the user drop it at once. */
const USER_CACHE_MS = 5 * 60_000

function bearer (request: FastifyRequest): string {
  const header = request.headers.authorization
  if (header === undefined || header.trim() === '') throw new AppError('TOKEN_NO_PROPORCIONADO')
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (m === null) throw new AppError('TOKEN_INVALIDO')
  return m[1]!
}

async function authPlugin (app: FastifyInstance): Promise<void> {
  await app.register(fastifyJwt, {
    secret: app.config.jwtSecret,
    sign: { algorithm: 'HS256', expiresIn: app.config.tokenTtlSeconds },
    verify: { algorithms: ['HS256'], requiredClaims: ['sub', 'jti', 'exp', 'iat'] },
  })
  const users = usersTable(app.registry)

  app.decorate('loadUser', async (em: EntityManager, id: string): Promise<UserSnapshot | null> => {
    const row = await users.findLive(em, { _id: id })
    return row === null ? null : users.snapshot(row)
  })

  app.decorateRequest('caller', null as unknown as AuthenticatedCaller)

  // One pass per request: verify the token (CPU only), then count the rate
  // limits and look up session and user together — one Redis round trip —
  // then decide: 429, 401, or go on with the caller known.
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config
    if (config.rateLimit === false) return
    const needsToken = config.public !== true
    let claims: TokenClaims | undefined
    let refused: AppError | undefined
    if (needsToken) {
      try {
        claims = verifyToken(bearer(request))
      } catch (err) {
        refused = err as AppError
      }
    }
    const limits = [ipLimit(request, app.config), ...(claims === undefined ? [] : [tokenLimit(claims.jti, app.config)])]
    const [counters, found] = await Promise.all([
      app.stores.rateLimits.hit(limits),
      claims === undefined ? undefined : app.stores.sessions.lookup(claims.jti, claims.sub),
    ])
    enforce(reply, limits, counters)
    if (!needsToken) return
    if (refused !== undefined || claims === undefined || found === undefined) throw refused ?? new AppError('TOKEN_INVALIDO')
    request.caller = await resolveCaller(request.em, claims, found)
  })

  function verifyToken (token: string): TokenClaims {
    try {
      return app.jwt.verify<TokenClaims>(token)
    } catch {
      throw new AppError('TOKEN_INVALIDO')
    }
  }

  /** Session state and user snapshot from the store; a miss is answered by the database and written back. */
  async function resolveCaller (em: EntityManager, claims: TokenClaims, found: SessionLookup): Promise<AuthenticatedCaller> {
    const ttlMs = claims.exp * 1000 - Date.now()
    let { session, user } = found
    if (session === null) {
      const row = await em.findOne(SessionEntity, { jti: claims.jti }) as SessionRow | null
      session = row === null || row.revocado !== null || row.usuario !== claims.sub ? 'revoked' : 'active'
      await app.stores.sessions.fillSession(claims.jti, session, ttlMs)
    }
    if (session !== 'active') throw new AppError('TOKEN_INVALIDO')
    if (user === null) {
      user = await app.loadUser(em, claims.sub)
      if (user === null) throw new AppError('TOKEN_INVALIDO')
      await app.stores.sessions.putUser(user, USER_CACHE_MS, found.userGen)
    }
    if (!user.activo) throw new AppError('TOKEN_INVALIDO')
    return { id: user.id, username: user.username, nombre: user.nombre, rol: user.rol, personalId: user.personalId, jti: claims.jti, exp: claims.exp }
  }
}

export default fp(authPlugin, { name: 'policia-auth', fastify: '5.x', dependencies: ['policia-config', 'policia-stores', 'policia-orm'] })
