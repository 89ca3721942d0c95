import { defineConfig } from 'vitest/config'

// `npm run test:browser`: needs Chromium at /usr/bin/chromium (Debian's
// `chromium` package; .ci/run installs it), so it stays out of `npm test`.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts', 'test/browser/console-build.setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
