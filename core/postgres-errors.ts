/**
 * PostgreSQL's answers about prepared statements and unique keys, told apart by SQLSTATE
 * (and text where one code covers more): what db/driver.ts does about a
 * statement, and what the error mapping (http/database-unavailable.ts)
 * answers. Pure.
 */

/** PostgreSQL's answer when it cannot type a parameter (`could not determine data type of parameter $1`). */
export function isUntypedParameter (err: unknown): boolean {
  return (err as { code?: string }).code === '42P18' || (err as { code?: string }).code === '42P08'
}

/** PostgreSQL's answer to a text it cannot read (`syntax error at or near …`). */
export function isSyntaxError (err: unknown): boolean {
  return (err as { code?: string }).code === '42601'
}

/** PostgreSQL's answer to an EXECUTE of a statement the session has not prepared (`invalid_sql_statement_name`). */
export function isUnknownStatement (err: unknown): boolean {
  return (err as { code?: string }).code === '26000'
}

/** PostgreSQL's answer when a prepared statement's result columns changed type (`cached plan must not change result type`). */
export function isStalePlan (err: unknown): boolean {
  return (err as { code?: string }).code === '0A000' && /cached plan/i.test((err as Error).message ?? '')
}

/** A unique violation (`23505`) of one of `constraints`: e.g. a create whose id was already taken. */
export function isUniqueViolationOf (err: unknown, constraints: ReadonlySet<string>): boolean {
  const e = err as { code?: string, constraint?: string }
  return e.code === '23505' && e.constraint !== undefined && constraints.has(e.constraint)
}

/**
 * PostgreSQL refused a statement for the values it holds (SQLSTATE class 22,
 * data exception, or 23, integrity constraint): it answered, so the
 * statement wrote nothing. A lost connection has no such code, and a
 * statement whose answer was lost may have committed.
 */
export function isRefusedValue (err: unknown): boolean {
  const code = (err as { code?: string }).code
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'))
}
