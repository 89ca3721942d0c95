/** EXPLAIN of a query the service ran (as knex logged it): every node of its plan, flattened. */
import type { TestDatabase } from './services.js'

export type PlanNode = Record<string, unknown>

export async function planNodes (db: TestDatabase, q: { sql: string, bindings: unknown[] }): Promise<PlanNode[]> {
  let n = 0
  const sql = /\$1\b/.test(q.sql) ? q.sql : q.sql.replace(/\?/g, () => `$${++n}`)
  const plan = (await db.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${sql}`, q.bindings))[0]!['QUERY PLAN']
  const nodes: PlanNode[] = []
  const walk = (node: PlanNode): void => { nodes.push(node); for (const c of (node.Plans as PlanNode[] | undefined) ?? []) walk(c) }
  walk((plan as Array<{ Plan: PlanNode }>)[0]!.Plan)
  return nodes
}
