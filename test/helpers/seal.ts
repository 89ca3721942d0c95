/** Sealing the history into signed checkpoints (docs/operator-guide.md "Tamper evidence: the global chain and checkpoints"). */
import { ok, type Api } from './http.js'
import type { TestDatabase } from './services.js'

/**
 * Checkpoints through `api` until every history row of `db` is sealed: the
 * sealer waits for the oldest transaction still running anywhere in the
 * cluster, and other test files share it. Answers the last checkpoint.
 */
export async function sealAll (api: Api, db: TestDatabase): Promise<Record<string, any>> {
  for (let i = 0; ; i++) {
    const cp = ok(await api.post('/auditoria/puntos-control'))
    const [left] = await db.query<{ n: number }>('select count(*)::int as n from sys_historial h where not exists (select 1 from sys_cadena c where c.historial = h.id)')
    if (left!.n === 0 || i >= 600) return cp
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
