/**
 * Which errors mean "the database is not there right now" (docs/operator-guide.md "Faults", 503)
 * and which stay 500: the shapes they reach the error mapping in (the
 * driver's error, MikroORM's DriverException around it, knex's pool
 * timeout, node's socket errors, a cause chain, an AggregateError). The
 * real outages are in test/integration/db-outage.test.ts and test/faults/.
 */
import { describe, expect, it } from 'vitest'
import { connect, createServer, type AddressInfo } from 'node:net'
import pg from 'pg'
import { KnexTimeoutError } from 'knex'
import { DriverException, UniqueConstraintViolationException } from '@mikro-orm/core'
import { databaseUnavailableReason, isDatabaseUnavailable } from '../../http/database-unavailable.js'
import { toAppError } from '../../http/errors.js'
import { freePort, listenFree } from '../helpers/free-port.js'

function pgError (code: string, message = 'error from the server'): Error {
  const e = new pg.DatabaseError(message, 0, 'error')
  e.code = code
  return e
}

async function refused (): Promise<Error> {
  const port = await freePort()
  return new Promise((resolve) => {
    connect(port, '127.0.0.1').once('error', resolve)
  })
}

describe('http/database-unavailable.ts', () => {
  it('recognises SQLSTATEs of a server that is shutting down, starting up, crashed or out of connections', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '08003', '53300', '25006']) {
      expect(databaseUnavailableReason(pgError(code)), code).toBe(code)
      expect(isDatabaseUnavailable(new DriverException(pgError(code))), `DriverException ${code}`).toBe(true)
    }
  })

  it('recognises a prepared statement whose columns changed under it (a rolling schema change), and no other 0A000', () => {
    const stale = Object.assign(pgError('0A000'), { message: 'cached plan must not change result type' })
    expect(databaseUnavailableReason(stale)).toBe('stale prepared statement')
    expect(isDatabaseUnavailable(Object.assign(pgError('0A000'), { message: 'unsupported feature' }))).toBe(false)
  })

  it('recognises node socket errors, knex\'s pool timeout and node-postgres\'s own texts', async () => {
    const err = await refused()
    expect(databaseUnavailableReason(err)).toBe('ECONNREFUSED')
    expect(databaseUnavailableReason(Object.assign(new Error('connect ENOENT /tmp/x/.s.PGSQL.5432'), { code: 'ENOENT', syscall: 'connect' }))).toBe('ENOENT')
    expect(databaseUnavailableReason(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe('ECONNRESET')
    expect(databaseUnavailableReason(new KnexTimeoutError('Knex: Timeout acquiring a connection.'))).toBe('KnexTimeoutError')
    expect(databaseUnavailableReason(new Error('Connection terminated unexpectedly'))).toBe('Connection terminated unexpectedly')
    expect(databaseUnavailableReason(new DriverException(new Error('COMMIT; - Client has encountered a connection error and is not queryable'))))
      .toBe('Client has encountered a connection error and is not queryable')
  })

  it('recognises node-postgres\'s connect timeout on a server that accepts and never answers (a stalled primary behind HAProxy)', async () => {
    const silent = createServer(() => { /* accepts, never answers */ })
    await listenFree(silent)
    try {
      const client = new pg.Client({ host: '127.0.0.1', port: (silent.address() as AddressInfo).port, user: 'x', connectionTimeoutMillis: 200 })
      const err = await client.connect().then(() => undefined, (e: unknown) => e)
      expect(err).toBeInstanceOf(Error)
      expect(isDatabaseUnavailable(new DriverException(err as Error)), String(err)).toBe(true)
      expect(databaseUnavailableReason(new Error('timeout expired'))).toBe('timeout expired')
    } finally {
      silent.close()
    }
  })

  it('looks into causes and aggregated errors', async () => {
    expect(isDatabaseUnavailable(new Error('outer', { cause: pgError('57P01') }))).toBe(true)
    expect(isDatabaseUnavailable(new AggregateError([new Error('x'), await refused()], 'all failed'))).toBe(true)
    const loop: Error & { cause?: unknown } = new Error('loop')
    loop.cause = loop
    expect(isDatabaseUnavailable(loop)).toBe(false)
  })

  it('leaves everything else alone: constraint violations, bad SQL, cancelled queries, plain errors', () => {
    for (const code of ['23505', '23503', '42601', '42P01', '57014', '40001', '22P02', 'XX000']) {
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(false)
    }
    expect(isDatabaseUnavailable(Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT', syscall: 'open' }))).toBe(false)
    expect(isDatabaseUnavailable(new Error('Transaction query already complete'))).toBe(false)
    expect(isDatabaseUnavailable(new Error('something mentioning Connection terminated unexpectedly in the middle of it'))).toBe(false)
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false)
    expect(isDatabaseUnavailable(undefined)).toBe(false)
  })

  it('is what toAppError answers 503 with; a duplicate stays 409 and an unknown error 500', () => {
    expect(toAppError(new DriverException(pgError('57P03')))).toMatchObject({ code: 'SERVICIO_NO_DISPONIBLE', statusCode: 503 })
    expect(toAppError(new UniqueConstraintViolationException(pgError('23505')))).toMatchObject({ statusCode: 409 })
    expect(toAppError(new DriverException(pgError('42601')))).toBeUndefined()
  })
})
