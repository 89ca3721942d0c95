/**
 * The request's logger (`request.log`), made on the first line it writes.
 *
 * Fastify gives every request pino's `logger.child({ reqId })`. Making that
 * child serialises the bindings through the redaction of every
 * wildcard path (log-options.ts), about 1.5% of the CPU of a GET, and most
 * requests never write a line at the configured level (LOG_LEVEL=warn: none
 * but errors). This stand-in answers the same methods, asks the parent
 * whether a level is enabled, and makes the real child (the same bindings,
 * so every line still carries the request id) only to write one.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type LogArgs = Parameters<FastifyBaseLogger['info']>

interface LevelAware extends FastifyBaseLogger {
  isLevelEnabled (level: string): boolean
}

class LazyChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined

  constructor (private readonly parent: LevelAware, private readonly bindings: Bindings, private readonly options: ChildLoggerOptions) {}

  private real (): FastifyBaseLogger {
    return this.made ??= this.parent.child(this.bindings, this.options)
  }

  private write (level: Level, args: LogArgs): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return
    const log = this.real()[level] as (...a: LogArgs) => void
    log.apply(this.made, args)
  }

  get level (): LevelWithSilentOrString { return this.made?.level ?? this.parent.level }
  set level (level: LevelWithSilentOrString) { this.real().level = level }

  fatal (...args: LogArgs): void { this.write('fatal', args) }
  error (...args: LogArgs): void { this.write('error', args) }
  warn (...args: LogArgs): void { this.write('warn', args) }
  info (...args: LogArgs): void { this.write('info', args) }
  debug (...args: LogArgs): void { this.write('debug', args) }
  trace (...args: LogArgs): void { this.write('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options)
  }
}

/**
 * Fastify's `childLoggerFactory`. A route with its own log level, or a
 * logger that cannot tell whether a level is enabled, gets its child at
 * once, as by default.
 */
export function lazyChildLogger (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  const parent = logger as Partial<LevelAware>
  if (options.level !== undefined || typeof parent.isLevelEnabled !== 'function') return logger.child(bindings, options)
  return new LazyChildLogger(parent as LevelAware, bindings, options)
}
