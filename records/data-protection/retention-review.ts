/**
 * The retention review (docs/user-guide.md "Personal data";
 * docs/operator-guide.md "Retention review"): once a day, one instance
 * lists the records whose `conservacion` has run out, in the list the
 * data-protection officer reads at GET /proteccion-datos/revision. A record
 * is due when its `desde` plus `años` is today or earlier, it is in one of
 * `estados` (when given), no prolongation reaches past today, and it was
 * not erased since its last change. Instances take turns under an advisory
 * lock, and a day's run is recorded, so the review runs once a day however
 * many instances ask.
 */
import type { AccessTable, Caller } from '../../core/access.js'
import { AppError, invalid } from '../../core/errors.js'
import { apiHint } from '../../core/registry/suggest.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { formatDateTime, nowSeconds, today } from '../../core/time.js'
import { tryTransactionLock, waitForTransactionLock } from '../../db/advisory-lock.js'
import { valueColumn } from '../../db/columns.js'
import { duePage, dueStatus, lastReviewRun, recordReviewRun, replaceDue, reviewRanOn, type DueQuery } from '../../db/data-protection-statements.js'
import type { Db } from '../../db/statement.js'
import { inTransaction } from '../../db/transaction.js'
import { parsePage } from '../list-query.js'

/** Any constant shared by every instance (db/schema-sync.ts and the global chain hold others). */
const REVIEW_LOCK = 720_094

/** What a run did: `total` records due when it ran; `ran` false when another instance had it, or today's run was done. */
export interface ReviewRun { ran: boolean, dia: string, total?: number }

function dueQueryOf (mod: ModuleDef): DueQuery {
  const r = mod.retention!
  const field = r.from === '_created' ? undefined : mod.fieldMap.get(r.from)!
  const stateField = mod.stateField === undefined ? undefined : mod.fieldMap.get(mod.stateField)
  return {
    modulo: mod.name,
    table: mod.table,
    years: r.years,
    from: field === undefined ? { column: '_created', date: false } : { column: valueColumn(field), date: field.type === 'date' },
    ...(r.states !== undefined && stateField !== undefined && { states: { column: valueColumn(stateField), values: r.states } }),
  }
}

/**
 * Runs the review unless today's is done (`force`: runs it again, waiting
 * for another instance's run to end). `instance` names who ran it.
 */
export async function runReview (em: Db, modules: readonly ModuleDef[], timeZone: string, instance: string, opts: { force: boolean }): Promise<ReviewRun> {
  const now = nowSeconds()
  const dia = today(now, timeZone)
  const queries = modules.filter((m) => m.retention !== undefined).map(dueQueryOf)
  if (queries.length === 0) return { ran: false, dia }
  return inTransaction(em, async (tem) => {
    if (opts.force) await waitForTransactionLock(tem, REVIEW_LOCK)
    else if (!await tryTransactionLock(tem, REVIEW_LOCK)) return { ran: false, dia }
    if (!opts.force && await reviewRanOn(tem, dia)) return { ran: false, dia }
    const total = await replaceDue(tem, queries, dia, timeZone, now)
    await recordReviewRun(tem, dia, now, total, instance)
    return { ran: true, dia, total }
  })
}

/** A due record as the officer reads it. */
export interface DueRecord {
  modulo: string
  id: string
  /** The date retention counts from, and the date it ran out. */
  desde: string
  vence: string
  estado: string | null
  eliminado: boolean
  /** Since when it is blocked, or null. */
  bloqueado: string | null
}

export interface ReviewPage {
  records: DueRecord[]
  total: number
  limit: number
  offset: number
  /** The latest run: its day, when, and how many records it found due. */
  ultima_revision: { dia: string, fecha: string, total: number } | null
}

const PARAMS = ['modulo', 'limit', 'offset']

/** A page of the records due (data-protection officers only), the longest overdue first. */
export async function reviewPage (em: Db, deps: { access: AccessTable, timeZone: string }, caller: Caller, byName: ReadonlyMap<string, ModuleDef>, query: Record<string, unknown>): Promise<ReviewPage> {
  if (!deps.access.protectsData(caller.rol)) throw new AppError('SIN_PERMISOS')
  for (const key of Object.keys(query)) {
    if (!PARAMS.includes(key)) throw invalid(key, `parámetro desconocido${apiHint(key, PARAMS)}`)
  }
  const modulo = typeof query.modulo === 'string' ? query.modulo : undefined
  if (modulo !== undefined && byName.get(modulo)?.retention === undefined) {
    const reviewed = [...byName.values()].filter((m) => m.retention !== undefined).map((m) => m.name)
    throw invalid('modulo', `no es un módulo con conservación declarada: ${reviewed.join(', ')}`)
  }
  const { limit, offset } = parsePage(query as Record<string, string | string[]>)
  const page = await duePage(em, modulo, limit, offset)
  const records: DueRecord[] = []
  for (const name of new Set(page.rows.map((r) => r.modulo))) {
    const mod = byName.get(name)
    if (mod === undefined) continue
    const ids = page.rows.filter((r) => r.modulo === name).map((r) => r.registro)
    const status = await dueStatus(em, mod.table, mod.stateField === undefined ? undefined : valueColumn(mod.fieldMap.get(mod.stateField)!), ids, mod.personalData)
    for (const id of ids) {
      const s = status.get(id)
      const due = page.rows.find((r) => r.modulo === name && r.registro === id)!
      records.push({ modulo: name, id, desde: due.desde, vence: due.vence, estado: s?.estado ?? null, eliminado: s?.eliminado ?? false, bloqueado: s?.bloqueado == null ? null : formatDateTime(new Date(s.bloqueado), deps.timeZone) })
    }
  }
  // The page's order (the longest overdue first) across modules.
  records.sort((a, b) => a.vence.localeCompare(b.vence) || a.modulo.localeCompare(b.modulo) || a.id.localeCompare(b.id))
  const last = await lastReviewRun(em)
  return { records, total: page.total, limit, offset, ultima_revision: last === undefined ? null : { dia: last.dia, fecha: formatDateTime(new Date(last.fecha), deps.timeZone), total: last.total } }
}
