/**
 * Decorates the app with the sessions service (`app.sessions`,
 * records/auth/sessions.ts): logins, logouts, password changes, and a
 * user's sessions and lock-out as an administrator acts on them.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createSessions, type Sessions } from '../records/auth/sessions.js'

declare module 'fastify' {
  interface FastifyInstance {
    sessions: Sessions
  }
}

async function sessionsPlugin (app: FastifyInstance): Promise<void> {
  app.decorate('sessions', await createSessions({
    registry: app.registry,
    access: app.access,
    sessions: app.stores.sessions,
    attemptLogs: app.stores.attemptLogs,
    users: app.records.storage(app.registry.usersModule),
    jwtSecret: app.config.jwtSecret,
    tokenTtlSeconds: app.config.tokenTtlSeconds,
    timeZone: app.config.timeZone,
  }))
}

export default fp(sessionsPlugin, { name: 'policia-sessions', fastify: '5.x', dependencies: ['policia-config', 'policia-stores', 'policia-records'] })
