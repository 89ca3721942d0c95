/**
 * HEAP_GROWTH_PERCENT (bin/heap-growth.ts): the V8 flag it sets is one this
 * Node still has (an upgrade that drops it fails here, not silently in
 * production), a child process that sets it runs with it, and the
 * configuration reads and bounds it.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { HEAP_GROWTH_FLAG } from '../../bin/heap-growth.js'
import { loadConfig } from '../../core/config.js'

const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'heap-growth-')); dirs.push(d); return d }
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })
/** What V8 says on stderr when a running process sets `flag`. */
const setting = (flag: string): string => spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString('${flag}=50')`], { encoding: 'utf8' }).stderr

describe('HEAP_GROWTH_PERCENT', () => {
  it('sets a flag this Node\'s V8 has, and the process runs with it', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' })
    expect(options).toContain(`  ${HEAP_GROWTH_FLAG} (`)
    // V8 says "unrecognized flag" on stderr for a flag it does not know, and nothing for one it sets.
    expect(setting(`${HEAP_GROWTH_FLAG}-of-no-node`)).toMatch(/unrecognized flag/)
    expect(setting(HEAP_GROWTH_FLAG)).toBe('')
  })

  it('is 50 unless set; 0 leaves V8\'s rule; a value that is no whole number from 0 to 1000 stops the start', () => {
    expect(loadConfig({ DATA_DIR: tmp() }).heapGrowthPercent).toBe(50)
    expect(loadConfig({ DATA_DIR: tmp(), HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0)
    expect(() => loadConfig({ DATA_DIR: tmp(), HEAP_GROWTH_PERCENT: 'mucho' })).toThrow(/HEAP_GROWTH_PERCENT must be a whole number ≥ 0 and ≤ 1000/)
    expect(() => loadConfig({ DATA_DIR: tmp(), HEAP_GROWTH_PERCENT: '5000' })).toThrow(/HEAP_GROWTH_PERCENT/)
  })
})
