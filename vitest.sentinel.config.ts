import { defineConfig } from 'vitest/config'
import base from './vitest.config.js'

/**
 * `npm run test:sentinel`: the tests of the store layer and of what stands
 * on it (sessions, limits, ids, idempotency, the event stream's signals and
 * slots) on a Redis behind Sentinels of the run's own
 * (test/helpers/sentinel-setup.ts), through the client the service builds
 * for REDIS_SENTINELS. PostgreSQL as `npm test` has it (DATABASE_URL, or
 * embedded).
 */
export default defineConfig({
  test: {
    // The base's settings (pool, workers, timeouts); its file list and setup replaced, not added to.
    ...base.test,
    include: [
      'test/integration/stores.test.ts',
      'test/integration/admission.test.ts',
      'test/integration/auth.test.ts',
      'test/integration/rate-limit.test.ts',
      'test/integration/ids.test.ts',
      'test/integration/idempotency.test.ts',
      'test/integration/event-stream.test.ts',
    ],
    globalSetup: ['test/helpers/sentinel-setup.ts', 'test/helpers/global-setup.ts'],
  },
})
