/**
 * Pino options of the service: request ids come from app.ts; here, what a
 * log line may hold. Logs at any level, trace included, never hold a
 * password, a token or an encrypted field's value (docs/operator-guide.md "Logs"):
 *
 * - requests are logged as method, URL, host and client address only (no
 *   headers, no body), with secret and free-text query values hidden
 *   (log-safe-url.ts);
 * - errors as type, code, status, message and stack only: Node's HTTP parse
 *   errors carry `rawPacket`, the raw bytes of a request that failed to
 *   parse (its Authorization header and body included), which pino's
 *   standard serializer would write out; a SyntaxError's message quotes the
 *   text that failed to parse, so it is dropped;
 * - anything logged under a name that means a secret is redacted.
 */
import type { FastifyServerOptions } from 'fastify'
import type { DestinationStream } from 'pino'
import type { Registry } from '../core/registry/types.js'
import { HIDDEN, logSafeUrl } from './log-safe-url.js'

/** Query parameter names whose values are secret: every encrypted or password field of any module. */
export function secretNames (registry: Registry): Set<string> {
  const names = new Set<string>()
  for (const mod of registry.modules) {
    for (const f of mod.fields) if (f.encrypted || f.type === 'password') names.add(f.name)
  }
  return names
}

interface LoggedRequest {
  method?: string
  url?: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}

interface LoggedError {
  name?: string
  type?: string
  message?: string
  code?: unknown
  statusCode?: unknown
  stack?: string
}

interface ErrorLine { [key: string]: unknown, type: string, message: string, stack: string }

function errorLine (raw: unknown): ErrorLine {
  if (raw === null || typeof raw !== 'object') return { type: typeof raw, message: String(raw), stack: '' }
  const err = raw as LoggedError
  const type = String(err.type ?? err.name ?? (raw as object).constructor?.name ?? 'Error')
  const quotesInput = type === 'SyntaxError'
  const stack = typeof err.stack === 'string' ? err.stack : ''
  const out: ErrorLine = {
    type,
    message: quotesInput ? '(input text omitted)' : String(err.message ?? ''),
    stack: quotesInput ? stack.split('\n').slice(1).join('\n') : stack,
  }
  if (typeof err.code === 'string' || typeof err.code === 'number') out.code = err.code
  if (typeof err.statusCode === 'number') out.statusCode = err.statusCode
  return out
}

export function loggerOptions (level: string, registry: Registry, stream?: DestinationStream): FastifyServerOptions['logger'] {
  const names = secretNames(registry)
  const censored = ['password', 'password_actual', 'password_nueva', 'token', 'authorization', 'cookie', ...names]
  return {
    level,
    ...(stream !== undefined && { stream }),
    redact: {
      paths: [
        'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
        ...censored.flatMap((n) => [`["${n}"]`, `*["${n}"]`]),
      ],
      censor: HIDDEN,
    },
    serializers: {
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: logSafeUrl(req.url ?? '', names),
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
      err: errorLine,
    },
  }
}
