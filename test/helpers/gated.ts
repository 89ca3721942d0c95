/**
 * Two app instances on a harness's database and stores, where the second
 * instance's writes to the session store can be held back: a slow network
 * between one instance and Redis, made deterministic to test races between
 * a cache fill and a concurrent change. The stores are the real ones
 * (Redis under the harness prefix, or a fresh in-process pair shared by
 * both instances); only the timing of B's writes changes.
 */
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../app.js'
import { createStores } from '../../stores/factory.js'
import type { SessionStore } from '../../stores/sessions/contract.js'
import type { Harness } from './app.js'
import { testRedis, usingRedis } from './services.js'

export interface Hold {
  /** Resolves when B has started the held write (it has read the database already). */
  readonly reached: Promise<string>
  /** Lets the held write go through. */
  release (): void
}

export interface GatedPair {
  readonly a: FastifyInstance
  readonly b: FastifyInstance
  /** Holds B's next session-store write whose method name matches `method` (lookups are never held). */
  hold (method: RegExp): Hold
  close (): Promise<void>
}

export async function gatedPair (h: Harness): Promise<GatedPair> {
  const redis = usingRedis ? testRedis() : undefined
  const shared = createStores(redis, h.redisPrefix)
  const sessions = shared.sessions
  let pending: { method: RegExp, reached: (name: string) => void, released: Promise<void> } | undefined
  const held = new Proxy(sessions, {
    get (target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function' || typeof prop !== 'string') return value
      return async (...args: unknown[]) => {
        const p = pending
        if (p !== undefined && !/^lookup/.test(prop) && p.method.test(prop)) {
          pending = undefined
          p.reached(prop)
          await p.released
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  const config = h.config // the harness already lifts the rate limits
  const build = (s: SessionStore): Promise<FastifyInstance> => buildApp({
    config, logger: false, stores: { ...shared, sessions: s }, ...(h.db.embedded !== undefined && { embedded: h.db.embedded }),
  })
  const a = await build(sessions)
  const b = await build(held)
  return {
    a,
    b,
    hold (method) {
      let release!: () => void
      let reached!: (name: string) => void
      const released = new Promise<void>((resolve) => { release = resolve })
      const reachedP = new Promise<string>((resolve, reject) => {
        reached = resolve
        setTimeout(() => reject(new Error(`instance B made no session-store write matching ${String(method)}`)), 10_000).unref()
      })
      pending = { method, reached, released }
      return { reached: reachedP, release }
    },
    async close () {
      pending = undefined
      await a.close()
      await b.close()
      redis?.disconnect()
    },
  }
}
