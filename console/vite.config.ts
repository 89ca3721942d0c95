/**
 * The console's bundle (docs/architecture.md "The console"): Preact with its
 * automatic JSX runtime, served by the service under /consola/ from
 * console/dist. No source maps or inline assets in the output: the CSP
 * allows scripts and styles from the service's own files only.
 */
import { defineConfig } from 'vite'

export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  base: '/consola/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  logLevel: 'warn',
})
