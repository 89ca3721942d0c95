/**
 * `npm run test:sentinel`: the store layer's tests on a Sentinel-managed
 * Redis (docs/operations.md "Redis Sentinel"). Starts a primary, a replica
 * and three Sentinels of the run's own on loopback, and points every test
 * at them through REDIS_SENTINELS and REDIS_SENTINEL_NAME in place of
 * REDIS_URL; stops them at the end.
 */
import { startSentinelGroup } from './redis-sentinel.js'

export default async function setup (): Promise<() => Promise<void>> {
  const group = await startSentinelGroup()
  delete process.env.REDIS_URL
  Object.assign(process.env, group.env)
  return async () => { await group.destroy() }
}
