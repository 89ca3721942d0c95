/**
 * The fixture of the Redis restore scenarios (docs/operator-guide.md "Sessions and a Redis restore"; docs/operator-guide.md "Ids and a Redis restore"): a harness
 * for the file, and per test a redis-server of its own with two instances
 * on it, all stopped after the test. Registers its hooks where it is called
 * (a test file's top level).
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from './app.js'
import { startRedisServer, type RedisServer } from './redis-server.js'

export interface PrivateRedis {
  /** The file's harness (its database and Redis key prefix); set once its beforeAll ran. */
  readonly h: Harness
  /** This test's redis-server, with `args` as in startRedisServer. */
  start (args: string[]): Promise<RedisServer>
  /** Two instances on `server`, each with the Redis stores. */
  instances (server: RedisServer): Promise<[FastifyInstance, FastifyInstance]>
}

export function usePrivateRedis (): PrivateRedis {
  let h: Harness | undefined
  let redis: RedisServer | undefined
  let apps: FastifyInstance[] = []
  beforeAll(async () => { h = await createHarness() })
  afterAll(async () => { await h?.close() })
  afterEach(async () => {
    for (const app of apps) await h!.closeApp(app)
    apps = []
    await redis?.destroy()
    redis = undefined
  })
  return {
    get h () { return h! },
    async start (args) {
      redis = await startRedisServer(args)
      return redis
    },
    async instances (server) {
      apps = [await h!.app({ env: { REDIS_URL: server.url } }), await h!.app({ env: { REDIS_URL: server.url } })]
      expect(apps.map((a) => a.stores.kind)).toEqual(['redis', 'redis'])
      return [apps[0]!, apps[1]!]
    },
  }
}

/** Until every instance answers /ready again (they reconnect to Redis by themselves). */
export async function reconnected (...list: FastifyInstance[]): Promise<void> {
  for (const app of list) {
    let status = 0
    for (let i = 0; i < 100 && status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      status = (await app.inject({ method: 'GET', url: '/ready' })).statusCode
    }
    expect(status).toBe(200)
  }
}
