import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault scenarios run apart: npm run test:faults (vitest.faults.config.ts);
    // the browser test too, since it needs Chromium: npm run test:browser.
    exclude: ['test/faults/**', 'test/browser/**', '**/node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
})
