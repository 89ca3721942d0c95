import { defineConfig } from 'vitest/config'

// `npm run test:browser`: needs Chromium at /usr/bin/chromium (Debian's
// `chromium` package; .ci/run installs it), so it stays out of `npm test`.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts', 'test/browser/console-build.setup.ts'],
    pool: 'forks',
    // Two files at once: one file alone kept 0.8 of the two cores busy, as
    // a page waits for its answers (504 s against 358 s, docs/testing.md).
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
