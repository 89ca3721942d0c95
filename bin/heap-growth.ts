/**
 * How far V8 lets the heap grow past what its last full collection left
 * (HEAP_GROWTH_PERCENT, docs/operator-guide.md "Configuration"). Under a
 * steady load V8 grows the heap up to four times the live objects before
 * collecting again: the service's live set stays under 100 MB, its resident
 * memory went past 400 MB (docs/performance.md "Memory under a mixed
 * soak"). `--heap-growing-percent` is one of V8's own flags (listed by
 * `node --v8-options`), read at every full collection, so setting it once
 * the process runs takes effect from the next one;
 * test/unit/heap-growth.test.ts fails if a Node upgrade drops it.
 */
import { setFlagsFromString } from 'node:v8'

export const HEAP_GROWTH_FLAG = '--heap-growing-percent'

/** 0 leaves V8's own rule. */
export function limitHeapGrowth (percent: number): void {
  if (percent > 0) setFlagsFromString(`${HEAP_GROWTH_FLAG}=${percent}`)
}
