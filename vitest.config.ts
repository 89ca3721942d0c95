import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // The console's unit tests (its pure modules) run here too: `npm test` stays the one command.
    include: ['test/**/*.test.ts', 'console/test/**/*.test.ts'],
    // The long suites run apart, each by its own command (docs/testing.md):
    // npm run test:long (child processes, private servers, the fuzzer at
    // full size), test:faults, test:browser (Chromium), test:contract (Prism).
    exclude: ['test/long/**', 'test/faults/**', 'test/browser/**', 'test/contract/**', '**/node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // Each worker keeps the modules it has loaded from one file to the next
    // (the app's graph was imported anew for every file: 70 s of a 400 s
    // run). Files share no state through modules: every file builds its own
    // apps, database and Redis prefix, and nothing is mocked.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
})
