import { defineConfig } from 'vitest/config'

// `npm run test:contract`: the tour through Stoplight Prism (a child
// process of its own and a listening service), apart from `npm test`.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/contract/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 600_000,
    hookTimeout: 400_000,
  },
})
