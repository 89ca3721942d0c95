/**
 * MikroORM's PostgreSQL driver with one change: a BEGIN that fails throws
 * its own error.
 *
 * A pooled connection can be dead before the pool knows it: PostgreSQL
 * shut down or restarted, and the socket's end has not been read yet. knex
 * then sends BEGIN on it, swallows the failure and hands back a
 * transaction that is already closed, whose first query fails with
 * "Transaction query already complete" — a text that says nothing about
 * the database, which became a 500. Here such a BEGIN throws the driver's
 * error instead ("Connection terminated unexpectedly", 57P01, ECONNRESET
 * …), which the error mapping (http/database-unavailable.ts) answers with
 * 503; knex has by then marked the connection, and the pool replaces it.
 */
import type { Configuration } from '@mikro-orm/core'
import { PostgreSqlConnection, PostgreSqlDriver, type Knex } from '@mikro-orm/postgresql'

type BeginOptions = Parameters<PostgreSqlConnection['begin']>[0]

class ServiceConnection extends PostgreSqlConnection {
  override async begin (options: BeginOptions = {}): Promise<Knex.Transaction> {
    const trx = await super.begin(options)
    if (options.ctx === undefined && trx.isCompleted()) {
      await trx.executionPromise // rejects with the error of BEGIN
      throw new Error('BEGIN did not open a transaction')
    }
    return trx
  }
}

export class ServiceDriver extends PostgreSqlDriver {
  constructor (config: Configuration) {
    super(config)
    // PostgreSqlDriver names its connection class in its constructor; this
    // swaps in the one above before anything has connected.
    const self = this as unknown as { connection: PostgreSqlConnection }
    self.connection = new ServiceConnection(config)
  }
}
