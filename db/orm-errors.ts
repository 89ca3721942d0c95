/**
 * A statement's errors as MikroORM's own queries raise them: a unique
 * violation as UniqueConstraintViolationException, a lost connection as a
 * ConnectionException …, which http/errors.ts answers (409, 503). For the
 * statements whose callers count on that (they were ORM calls).
 */
import type { Db } from './statement.js'

export async function ormErrors<T> (db: Db, statement: Promise<T>): Promise<T> {
  try {
    return await statement
  } catch (err) {
    throw db.getDriver().convertException(err as Error)
  }
}
