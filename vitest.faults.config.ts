import { defineConfig } from 'vitest/config'

/**
 * `npm run test:faults`: the fault scenarios of test/faults/ (own
 * PostgreSQL cluster, redis-server, service processes and nginx per file).
 * Not part of `npm test`: they need nginx, the PostgreSQL binaries and root.
 * One file at a time: each loads the whole 2-core machine.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
})
