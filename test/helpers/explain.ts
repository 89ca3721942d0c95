/** EXPLAIN of a query the service ran (as knex logged it): every node of its plan, flattened. */
import type { TestDatabase } from './services.js'

export type PlanNode = Record<string, unknown>

export async function planNodes (db: TestDatabase, q: { sql: string, bindings: unknown[] }): Promise<PlanNode[]> {
  let n = 0
  const sql = /\$1\b/.test(q.sql) ? q.sql : q.sql.replace(/\?/g, () => `$${++n}`)
  const plan = (await db.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${sql}`, q.bindings))[0]!['QUERY PLAN']
  return flatten((plan as Array<{ Plan: PlanNode }>)[0]!.Plan)
}

/**
 * The plan PostgreSQL keeps for the query as a named statement once it
 * stops planning for each value (a generic plan, forced here): what every
 * later execution of the statement runs, whatever its values.
 */
export async function genericPlanNodes (db: TestDatabase, q: { sql: string, bindings: unknown[] }): Promise<PlanNode[]> {
  let n = 0
  const sql = /\$1\b/.test(q.sql) ? q.sql : q.sql.replace(/\?/g, () => `$${++n}`)
  await db.query('set plan_cache_mode = force_generic_plan')
  try {
    await db.query(`prepare generic_plan_probe as ${sql}`)
    // EXPLAIN EXECUTE takes its arguments as literals (typed by the statement's parameters).
    const args = q.bindings.map((v) => v === null ? 'null' : `'${String(v).replace(/'/g, "''")}'`).join(', ')
    const plan = (await db.query<{ 'QUERY PLAN': unknown }>(`explain (format json) execute generic_plan_probe${args === '' ? '' : `(${args})`}`))[0]!['QUERY PLAN']
    return flatten((plan as Array<{ Plan: PlanNode }>)[0]!.Plan)
  } finally {
    await db.query('deallocate generic_plan_probe').catch(() => undefined)
    await db.query('reset plan_cache_mode')
  }
}

function flatten (root: PlanNode): PlanNode[] {
  const nodes: PlanNode[] = []
  const walk = (node: PlanNode): void => { nodes.push(node); for (const c of (node.Plans as PlanNode[] | undefined) ?? []) walk(c) }
  walk(root)
  return nodes
}
