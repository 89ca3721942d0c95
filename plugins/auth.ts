/**
 * Bearer-token authentication (docs/user-guide.md "Authentication and roles") and rate limits (docs/user-guide.md "Rate limits"). /docs*,
 * /ready and the console's files are counted only in a per-IP window of
 * their own; /health not at all. Every other route passes through one
 * onRequest hook that, except on the public routes (login), verifies the
 * JWT (HS256 only), checks its session is not revoked and loads the
 * caller's current role and `activo` flag. A request whose token verifies
 * counts against that token's limit only; any other (no token, a bad or
 * expired one, login) against the client address (unless
 * RATE_LIMIT_IP_EXEMPT names it), and so does a well-signed token the
 * session lookup refuses. The counters and both answers come from the
 * stores in one operation (one Redis command, stores/admission.ts); the
 * database answers only a miss.
 */
import fp from 'fastify-plugin'
import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AppError } from '../core/errors.js'
import type { Caller } from '../core/access.js'
import { readRevocationEpoch, readSessionAtEpoch } from '../db/revocation-epoch.js'
import { usersTable } from '../records/users/users-table.js'
import type { CachedSession, SessionFill, SessionLookup, UserSnapshot } from '../stores/sessions/contract.js'
import { enforce, ipLimit, ownWindowLimit, tokenLimit } from '../http/rate-limit.js'
import { MemoryRateLimitStore } from '../stores/rate-limits/memory.js'

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
    /** Reads the database's revocation epoch now (what the periodic check does). */
    syncRevocationEpoch (): Promise<void>
    /**
     * The caller of a request that is still open (a live stream) as its
     * session and user stand now, by the same rules as a new request but
     * counted against no limit; TOKEN_INVALIDO when the token expired or was
     * revoked, or the user was deactivated or deleted.
     */
    recheckCaller (caller: AuthenticatedCaller): Promise<AuthenticatedCaller>
  }
}

/** How many verified tokens each instance remembers (the oldest first out). */
const VERIFIED_TOKENS = 5_000
/** How long a user snapshot may stay cached; writes to the user drop it at once. */
const USER_CACHE_MS = 5 * 60_000
/** How often an instance reads the database's revocation epoch (docs/operator-guide.md, "Sessions and a Redis restore"). */
export const EPOCH_CHECK_MS = 2_000

/** A session that no longer admits the token: revoked, or another user's. */
const sessionRefuses = (claims: TokenClaims, s: CachedSession): boolean => s.state !== 'active' || s.userId !== claims.sub

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
    // Verified tokens are remembered by `verifyToken` below, not by
    // fast-jwt's cache (docs/performance.md "Figures behind the code's choices").
    verify: { algorithms: ['HS256'], requiredClaims: ['sub', 'jti', 'exp', 'iat'] },
  })
  const users = usersTable(app.registry)

  app.decorate('loadUser', async (em: EntityManager, id: string): Promise<UserSnapshot | null> => {
    const row = await users.findLive(em, { _id: id })
    return row === null ? null : users.snapshot(row)
  })

  app.decorateRequest('caller', null as unknown as AuthenticatedCaller)

  // /docs* and /ready are counted in this instance's memory (docs/user-guide.md "Rate limits"): what
  // they cost is this instance's CPU, and /ready must answer truthfully
  // (503) rather than wait on the Redis it reports on.
  const ownWindows = new MemoryRateLimitStore()

  // One pass per request: verify the token (CPU only), then count the rate
  // limits and look up session and user together — one Redis command —
  // then decide: 429, 401, or go on with the caller known.
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config
    if (config.rateLimit === false) return
    if (config.rateLimit !== undefined) {
      const own = ownWindowLimit(config.rateLimit, request, app.config)
      if (own === undefined) return
      const counters = await ownWindows.hit([own])
      if (config.rateLimitHeaders !== false || counters[0]!.count > own.max) enforce(reply, [own], counters)
      return
    }
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
    // A station is not an attacker (docs/user-guide.md "Rate limits"): a
    // verified token is counted per token only, so officers behind one
    // address do not share its budget; without one, per address. The
    // address (proxy headers read under TRUST_PROXY) only when needed.
    const ip = claims === undefined ? ipLimit(request, app.config) : undefined
    const limits = claims !== undefined ? [tokenLimit(claims.jti, app.config)] : ip === undefined ? [] : [ip]
    // An exempt address with no valid token: nothing to count.
    if (limits.length === 0) {
      if (!needsToken) return
      throw refused ?? new AppError('TOKEN_INVALIDO')
    }
    // Awaited only when it has to wait: most admissions are answered here (docs/performance.md "A create runs cold").
    const admission = app.stores.admit(limits, claims === undefined ? undefined : { jti: claims.jti, userId: claims.sub })
    const { counters, found } = admission instanceof Promise ? await admission : admission
    enforce(reply, limits, counters)
    if (!needsToken) return
    if (refused !== undefined || claims === undefined || found === undefined) throw refused ?? new AppError('TOKEN_INVALIDO')
    try {
      const caller = resolveCaller(() => request.em, claims, found)
      request.caller = caller instanceof Promise ? await caller : caller
    } catch (err) {
      // A well-signed token that is revoked, never issued here or whose
      // user is gone is no credential: the request is an unauthenticated
      // one of its address too (429 past that limit, else the 401).
      const byAddress = err instanceof AppError && err.code === 'TOKEN_INVALIDO' ? ipLimit(request, app.config) : undefined
      if (byAddress !== undefined) {
        const [byIp] = await app.stores.rateLimits.hit([byAddress])
        enforce(reply, [byAddress, limits[0]!], [byIp!, counters[0]!])
      }
      throw err
    }
  })

  app.decorate('recheckCaller', async (caller: AuthenticatedCaller): Promise<AuthenticatedCaller> => {
    if (caller.exp * 1000 <= Date.now()) throw new AppError('TOKEN_INVALIDO')
    const found = await app.stores.sessions.lookup(caller.jti, caller.id)
    let em: EntityManager | undefined
    return resolveCaller(() => em ??= app.orm.em.fork(), { sub: caller.id, jti: caller.jti, exp: caller.exp, iat: 0 }, found)
  })

  // A client sends the same token on every request: a verified one is
  // remembered by its exact text until its `exp` (the oldest first out), so
  // a repeat skips the HMAC check, both JSON parses and the claim checks.
  // Keyed by the text itself, not a hash of it (fast-jwt's cache hashes
  // every token it is asked about). Errors are not remembered. Revocation
  // is not the signature's business: the session is looked up every time.
  const verified = new Map<string, TokenClaims>()
  function verifyToken (token: string): TokenClaims {
    const known = verified.get(token)
    if (known !== undefined && known.exp * 1000 > Date.now()) return known
    let claims: TokenClaims
    try {
      claims = Object.freeze(app.jwt.verify<TokenClaims>(token))
    } catch {
      verified.delete(token)
      throw new AppError('TOKEN_INVALIDO')
    }
    if (verified.size >= VERIFIED_TOKENS) verified.delete(verified.keys().next().value!)
    verified.set(token, claims)
    return claims
  }

  /**
   * Session and user from the store; a miss (or a cache that may be stale)
   * is answered by the database and cached as of the revocation epoch read
   * first. A session is bound to its user: a token whose `sub` is not the
   * session's user is refused, from the cache as from the database.
   * `em` (the request's EntityManager) is forked only on such a miss.
   */
  function resolveCaller (em: () => EntityManager, claims: TokenClaims, found: SessionLookup): AuthenticatedCaller | Promise<AuthenticatedCaller> {
    const { session, user } = found
    // Both cached (nearly every request): answered at once, no promise.
    return session !== null && user !== null ? callerOf(claims, session, user) : resolveMissing(em, claims, found)
  }

  async function resolveMissing (em: () => EntityManager, claims: TokenClaims, found: SessionLookup): Promise<AuthenticatedCaller> {
    let { session, user } = found
    if (session !== null && sessionRefuses(claims, session)) throw new AppError('TOKEN_INVALIDO')
    const fill: { session?: SessionFill['session'], user?: SessionFill['user'] } = {}
    let epoch: number
    if (session === null) {
      const read = await readSessionAtEpoch(em(), claims.jti)
      epoch = read.epoch
      if (read.session === null) throw new AppError('TOKEN_INVALIDO') // never issued here
      session = { state: read.session.revocado === null ? 'active' : 'revoked', userId: read.session.usuario }
      fill.session = { jti: claims.jti, value: session, ttlMs: claims.exp * 1000 - Date.now() }
    } else {
      epoch = await readRevocationEpoch(em())
    }
    if (user === null && !sessionRefuses(claims, session)) {
      user = await app.loadUser(em(), claims.sub)
      if (user !== null) fill.user = { snapshot: user, ttlMs: USER_CACHE_MS }
    }
    await app.stores.sessions.fill(epoch, fill, found.stamp)
    if (user === null) throw new AppError('TOKEN_INVALIDO')
    return callerOf(claims, session, user)
  }

  /** The caller of a token whose session and user are known; TOKEN_INVALIDO when the session is revoked or another user's, or the user inactive. */
  function callerOf (claims: TokenClaims, session: CachedSession, user: UserSnapshot): AuthenticatedCaller {
    if (sessionRefuses(claims, session) || !user.activo) throw new AppError('TOKEN_INVALIDO')
    return { id: user.id, username: user.username, nombre: user.nombre, rol: user.rol, personalId: user.personalId, jti: claims.jti, exp: claims.exp }
  }

  // Each instance learns the database's revocation epoch at start and
  // every EPOCH_CHECK_MS, so a Redis that came back older without this
  // instance reconnecting (a restore behind a proxy) is noticed by then,
  // and so is a revocation made by the command line (bin/users.ts) beside
  // a single instance on PostgreSQL with in-process stores. (The embedded
  // database serves one process: nothing else can revoke there.)
  const sessions = app.stores.sessions
  const syncEpoch = async (): Promise<void> => { sessions.noteEpoch(await readRevocationEpoch(app.orm.em.fork())) }
  app.decorate('syncRevocationEpoch', syncEpoch)
  if (app.stores.kind === 'redis' || app.databaseKind !== 'embedded') {
    await syncEpoch()
    let running = false
    const timer = setInterval(() => {
      if (running) return
      running = true
      syncEpoch().catch((err: Error) => { app.log.debug({ err: { message: err.message } }, 'revocation epoch check failed') }).finally(() => { running = false })
    }, EPOCH_CHECK_MS)
    timer.unref()
    app.addHook('onClose', async () => { clearInterval(timer) })
  }
}

export default fp(authPlugin, { name: 'policia-auth', fastify: '5.x', dependencies: ['policia-config', 'policia-stores', 'policia-orm'] })
