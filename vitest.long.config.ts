import { defineConfig } from 'vitest/config'
import base from './vitest.config.js'

/**
 * `npm run test:long`: the tests that take long by nature, apart from
 * `npm test` so that a newcomer's run stays short (docs/testing.md).
 * test/long/ holds the commands and servers run as child
 * processes (admin commands, users, start-up waits, graceful shutdown,
 * client addresses on a listening server), private PostgreSQL clusters and
 * redis-servers (backup and restore, Redis restores, a Sentinel group's
 * failover), the embedded
 * database's maintenance rounds, the lock-out's windows and webhook retries
 * after a receiver's 10 s silence; beside them the
 * OpenAPI fuzzer at its full 10,000 requests (`npm test` sends 2,000).
 * PostgreSQL and Redis as `npm test` has them (DATABASE_URL / REDIS_URL,
 * or embedded). CI runs it in both modes.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/long/**/*.test.ts', 'test/integration/openapi-fuzz.test.ts'],
    exclude: ['**/node_modules/**'],
    env: { FUZZ_RUNS: process.env.FUZZ_RUNS ?? '10000' },
  },
})
