import { describe, expect, it } from 'vitest'
import pino from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import { lazyChildLogger } from '../../http/lazy-child-logger.js'

/** A pino logger at `level` writing into `lines`, counting the children it makes. */
function parent (level: string): { logger: FastifyBaseLogger, lines: Array<Record<string, unknown>>, children: () => number } {
  const lines: Array<Record<string, unknown>> = []
  const logger = pino({ level }, { write: (s: string) => { lines.push(JSON.parse(s) as Record<string, unknown>) } })
  let made = 0
  const child = logger.child
  // pino's children inherit from their parent: `this` keeps each one's own bindings.
  Object.assign(logger, { child (this: typeof logger, ...a: Parameters<typeof child>) { made++; return child.apply(this, a) } })
  return { logger: logger as unknown as FastifyBaseLogger, lines, children: () => made }
}

describe('lazy request logger', () => {
  it('makes no child while nothing is written at an enabled level', () => {
    const p = parent('warn')
    const log = lazyChildLogger(p.logger, { reqId: 'r-1' }, {})
    log.info({ a: 1 }, 'not written')
    log.debug('not written either')
    expect([p.lines.length, p.children()]).toEqual([0, 0])
    expect(log.level).toBe('warn')
  })

  it('writes an enabled line through one child that carries the bindings', () => {
    const p = parent('info')
    const log = lazyChildLogger(p.logger, { reqId: 'r-2' }, {})
    log.info({ user: 'u' }, 'first')
    log.warn('second %s', 'formatted')
    expect(p.children()).toBe(1)
    expect(p.lines.map((l) => [l.reqId, l.msg, l.level])).toEqual([['r-2', 'first', 30], ['r-2', 'second formatted', 40]])
    expect(p.lines[0]).toMatchObject({ user: 'u' })
  })

  it('a level set on the request logger applies to it alone', () => {
    const p = parent('warn')
    const log = lazyChildLogger(p.logger, { reqId: 'r-3' }, {})
    log.level = 'debug'
    log.debug('now written')
    p.logger.debug('the parent keeps its level')
    expect(p.lines.map((l) => l.msg)).toEqual(['now written'])
  })

  it('a route log level gets its child at once, at that level', () => {
    const p = parent('warn')
    const log = lazyChildLogger(p.logger, { reqId: 'r-4' }, { level: 'info' })
    expect(p.children()).toBe(1)
    log.info('route level')
    expect(p.lines.map((l) => [l.reqId, l.msg])).toEqual([['r-4', 'route level']])
  })

  it('child() of the request logger keeps the request id', () => {
    const p = parent('info')
    lazyChildLogger(p.logger, { reqId: 'r-5' }, {}).child({ part: 'x' }).info('nested')
    expect(p.lines[0]).toMatchObject({ reqId: 'r-5', part: 'x', msg: 'nested' })
  })
})
