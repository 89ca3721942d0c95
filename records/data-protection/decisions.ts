/**
 * The data-protection officer's decisions on a record (docs/user-guide.md
 * "Personal data"): prolong its retention (a reason and a new date), block
 * it (only the officer and superadmins read it then, every read logged),
 * unblock it. Each decision is kept for good in `sys_proteccion_datos`
 * with its author, date and reason; an erasure is kept there too
 * (records/data-protection/erasure.ts). Only a role with `proteccion_datos`.
 */
import type { AccessTable, Caller } from '../../core/access.js'
import { AppError, invalid } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { formatDateTime, isValidDate, nowSeconds, today } from '../../core/time.js'
import { BLOCKED_COLUMN } from '../../db/columns.js'
import type { DecisionKind, DecisionRow } from '../../db/data-protection-entities.js'
import { appendDecision, decisionsPage, dropDue, setBlocked } from '../../db/data-protection-statements.js'
import type { Db } from '../../db/statement.js'
import { inTransaction } from '../../db/transaction.js'
import { apiHint } from '../../core/registry/suggest.js'
import { parsePage } from '../list-query.js'
import type { ModuleStorage } from '../storage/module-storage.js'

export interface DecisionDeps {
  readonly access: AccessTable
  readonly timeZone: string
}

/** A decision as the API shows it. */
export interface DecisionView {
  fecha: string
  usuario: string
  modulo: string
  id: string
  accion: DecisionKind
  motivo: string
  hasta: string | null
}

/** The reason every decision needs: trimmed, 1 to 2000 characters. */
export function reasonOf (text: unknown): string {
  const motivo = typeof text === 'string' ? text.trim() : ''
  if (motivo === '') throw invalid('motivo', 'no puede estar vacío')
  return motivo
}

function officer (deps: DecisionDeps, caller: Caller): void {
  if (!deps.access.protectsData(caller.rol)) throw new AppError('SIN_PERMISOS')
}

/** The record's retention is prolonged to `hasta` (after today): it leaves the review list until then. */
export async function prolong (em: Db, deps: DecisionDeps, caller: Caller, mod: ModuleDef, storage: ModuleStorage, id: string, body: { motivo: string, hasta: string }): Promise<DecisionView> {
  officer(deps, caller)
  if (mod.retention === undefined) throw new AppError('MODULO_SIN_CONSERVACION')
  const motivo = reasonOf(body.motivo)
  const now = nowSeconds()
  if (!isValidDate(body.hasta) || body.hasta <= today(now, deps.timeZone)) throw invalid('hasta', 'debe ser una fecha posterior a hoy (AAAA-MM-DD)')
  return inTransaction(em, async (tem) => {
    await storage.findAny(tem, id, undefined, true)
    const decision: DecisionRow = { fecha: now, usuario: caller.id, modulo: mod.name, registro: id, accion: 'prolongar', motivo, hasta: body.hasta }
    await appendDecision(tem, decision)
    await dropDue(tem, mod.name, id)
    return viewOf(decision, deps.timeZone)
  })
}

/** Blocks (`block`) or unblocks the record, deleted or not. */
export async function setBlock (em: Db, deps: DecisionDeps, caller: Caller, mod: ModuleDef, storage: ModuleStorage, id: string, motivo: string, block: boolean): Promise<DecisionView & { bloqueado: string | null }> {
  officer(deps, caller)
  if (!mod.personalData) throw new AppError('MODULO_SIN_DATOS_PERSONALES')
  const reason = reasonOf(motivo)
  const now = nowSeconds()
  return inTransaction(em, async (tem) => {
    // Locked, so two officers' decisions on one record follow one another.
    const row = await storage.findAny(tem, id, undefined, true)
    const blocked = (row[BLOCKED_COLUMN] ?? null) !== null
    if (block && blocked) throw new AppError('REGISTRO_YA_BLOQUEADO')
    if (!block && !blocked) throw new AppError('REGISTRO_NO_BLOQUEADO')
    await setBlocked(tem, mod.table, id, block ? now : null)
    const decision: DecisionRow = { fecha: now, usuario: caller.id, modulo: mod.name, registro: id, accion: block ? 'bloquear' : 'desbloquear', motivo: reason, hasta: null }
    await appendDecision(tem, decision)
    return { ...viewOf(decision, deps.timeZone), bloqueado: block ? formatDateTime(now, deps.timeZone) : null }
  })
}

const DECISION_KINDS: readonly DecisionKind[] = ['prolongar', 'bloquear', 'desbloquear', 'suprimir']
const DECISION_PARAMS = ['modulo', 'id', 'accion', 'limit', 'offset']

/** A page of decisions, newest first: for superadmins and officers (those who read the read log). */
export async function listDecisions (em: Db, deps: DecisionDeps, caller: Caller, modules: ReadonlyMap<string, ModuleDef>, query: Record<string, unknown>): Promise<{ records: DecisionView[], total: number, limit: number, offset: number }> {
  if (!deps.access.readsLog(caller.rol)) throw new AppError('SIN_PERMISOS')
  for (const key of Object.keys(query)) {
    if (!DECISION_PARAMS.includes(key)) throw invalid(key, `parámetro desconocido${apiHint(key, DECISION_PARAMS)}`)
  }
  const filter: { modulo?: string, registro?: string, accion?: DecisionKind } = {}
  if (typeof query.modulo === 'string') {
    if (!modules.has(query.modulo)) throw invalid('modulo', `módulo desconocido: ${query.modulo}`)
    filter.modulo = query.modulo
  }
  if (typeof query.id === 'string') filter.registro = query.id
  if (typeof query.accion === 'string') {
    if (!DECISION_KINDS.includes(query.accion as DecisionKind)) throw invalid('accion', `debe ser una de: ${DECISION_KINDS.join(', ')}`)
    filter.accion = query.accion as DecisionKind
  }
  const { limit, offset } = parsePage(query as Record<string, string | string[]>)
  const page = await decisionsPage(em, filter, limit, offset)
  return { records: page.rows.map((r) => viewOf(r, deps.timeZone)), total: page.total, limit, offset }
}

/** Records an erasure among the decisions, in its transaction, and takes it off the review list. */
export async function recordErasure (tem: Db, caller: Caller, mod: ModuleDef, id: string, motivo: string, at: Date): Promise<void> {
  await appendDecision(tem, { fecha: at, usuario: caller.id, modulo: mod.name, registro: id, accion: 'suprimir', motivo, hasta: null })
  await dropDue(tem, mod.name, id)
}

function viewOf (d: DecisionRow, timeZone: string): DecisionView {
  return { fecha: formatDateTime(new Date(d.fecha), timeZone), usuario: d.usuario, modulo: d.modulo, id: d.registro, accion: d.accion, motivo: d.motivo, hasta: d.hasta }
}
