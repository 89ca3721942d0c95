/**
 * Whether an error means "PostgreSQL is not there right now" (docs/operator-guide.md "Faults":
 * unreachable, starting up, shutting down, failing over), so that it
 * answers 503 and not 500. The error can reach us in many shapes: a
 * DriverException that MikroORM made of a failed query (the driver's
 * properties copied onto it), the raw error of the pool when a connection
 * cannot be opened (knex's `begin`, outside MikroORM's conversion), a
 * failed COMMIT or ROLLBACK, knex's pool timeout, or node's socket errors,
 * sometimes as the `cause` of another error or inside an AggregateError.
 * Decided by SQLSTATE and node error codes; only node-postgres's own
 * errors, which carry no code, are recognised by their fixed text.
 */
import { isStalePlan } from '../core/postgres-errors.js'

/** SQLSTATE classes that mean the server or the connection is gone. */
const UNAVAILABLE_CLASSES = new Set([
  '08', // connection exception (08000, 08003, 08006, 08001, 08004 …)
  '53', // insufficient resources: too many connections, disk full, out of memory
])

const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: terminating connection due to administrator command
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '57P04', // database_dropped
  '57P05', // idle_session_timeout
  '25006', // read_only_sql_transaction: a write reached a standby (failover in progress)
])

/** Node socket errors: the server cannot be reached or dropped us. */
const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH',
  'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN',
])

/**
 * node-postgres raises these without a code (knex prefixes the SQL, so
 * they are matched at the end of the message). "timeout expired": its
 * connect timeout firing while the server accepted the socket but did not
 * answer (a stalled primary behind HAProxy, test/faults/patroni-failover.test.ts).
 */
const PG_CONNECTION_TEXTS = /(Connection terminated unexpectedly|Connection terminated|Connection terminated due to connection timeout|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|timeout expired)$/

interface ErrorLike {
  name?: unknown
  code?: unknown
  syscall?: unknown
  message?: unknown
  cause?: unknown
  errors?: unknown
}

/** The code (or node-postgres text) that marks `e` itself as "database unavailable". */
function reasonItself (e: ErrorLike): string | undefined {
  const code = typeof e.code === 'string' ? e.code : ''
  if (/^[0-9A-Z]{5}$/.test(code) && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_CLASSES.has(code.slice(0, 2)))) return code
  if (UNAVAILABLE_NODE_CODES.has(code)) return code
  // A Unix socket that is not there (ENOENT) while connecting.
  if (e.syscall === 'connect') return code === '' ? 'connect' : code
  // knex's pool gave up waiting for a connection.
  if (e.name === 'KnexTimeoutError') return 'KnexTimeoutError'
  // A prepared statement whose columns another instance just changed
  // (db/prepared-statements.ts): that transaction is lost, the next works.
  if (isStalePlan(e)) return 'stale prepared statement'
  return typeof e.message === 'string' ? PG_CONNECTION_TEXTS.exec(e.message)?.[1] : undefined
}

/**
 * Why `err` means the database is unavailable — the SQLSTATE, node code or
 * driver text found in it, its cause chain or its aggregated errors (fit
 * for a log line: never the SQL or its values) — or undefined when it does
 * not.
 */
export function databaseUnavailableReason (err: unknown): string | undefined {
  const seen = new Set<unknown>()
  const queue: unknown[] = [err]
  while (queue.length > 0 && seen.size < 20) {
    const e = queue.shift()
    if (e === null || typeof e !== 'object' || seen.has(e)) continue
    seen.add(e)
    const like = e as ErrorLike
    const reason = reasonItself(like)
    if (reason !== undefined) return reason
    if (like.cause !== undefined) queue.push(like.cause)
    if (Array.isArray(like.errors)) queue.push(...like.errors)
  }
  return undefined
}

export function isDatabaseUnavailable (err: unknown): boolean {
  return databaseUnavailableReason(err) !== undefined
}
