/**
 * The directory (GET /directorio, docs/user-guide.md "People by name
 * (directorio)"): the name of each user and staff member among some ids,
 * so a client shows `Rigoberta Menchú Pérez` where a record says
 * `USR-2026-00001` or `PER-2026-00001` (created by, history, custody,
 * assignments) in one request for a whole page.
 *
 * A user's name is its `nombre`, else its username; a staff member's is
 * its `nombre` and `apellidos` (those the staff module declares unencrypted,
 * joined by a space). Deleted people keep their name: a history outlives
 * them. Ids of no user or staff member, and people with no name, are left
 * out. Names only: nothing encrypted is read, so nothing is logged.
 */
import type { Db } from '../db/statement.js'
import { DETAILS, invalid, required } from '../core/errors.js'
import type { FieldDef, ModuleDef, Registry } from '../core/registry/types.js'
import { valueColumn } from '../db/columns.js'
import { entityName } from '../db/module-entity.js'
import { findRows } from '../db/row-query.js'

/** The most ids one request may ask about. */
export const DIRECTORY_MAX_IDS = 200
/** A record id (core/ids.ts: `PREFIX-YYYY-NNNNN`, at most 40 characters): anything else names nobody and never reaches the database. */
const RECORD_ID = /^[A-Z0-9]{2,6}-\d{4}-\d{5,28}$/

export interface PersonName { id: string, nombre: string }

/** A module's fields that make up a person's name, in order; the fallback when they are all empty. */
interface NamePlan { readonly mod: ModuleDef, readonly parts: readonly FieldDef[], readonly fallback?: FieldDef }

const plainText = (f: FieldDef | undefined): f is FieldDef => f !== undefined && f.type === 'string' && !f.encrypted

function plans (registry: Registry): NamePlan[] {
  const users = registry.usersModule
  const out: NamePlan[] = []
  const userName = users.fieldMap.get('nombre')
  out.push({ mod: users, parts: plainText(userName) ? [userName] : [], fallback: users.fieldMap.get('username')! })
  const staff = registry.staffModule
  if (staff !== undefined && staff !== users) {
    const parts = ['nombre', 'apellidos'].map((n) => staff.fieldMap.get(n)).filter(plainText)
    if (parts.length > 0) out.push({ mod: staff, parts })
  }
  return out
}

/** The names of the people among `ids` (deduplicated, at most DIRECTORY_MAX_IDS), in the order asked. */
export async function directoryNames (em: Db, registry: Registry, ids: readonly string[]): Promise<PersonName[]> {
  const found = new Map<string, string>()
  for (const plan of plans(registry)) {
    const mine = ids.filter((id) => id.startsWith(`${plan.mod.prefix}-`) && RECORD_ID.test(id))
    if (mine.length === 0) continue
    const fields = [...plan.parts, ...(plan.fallback === undefined ? [] : [plan.fallback])]
    const rows = await findRows(em, entityName(plan.mod), { _id: { $in: mine } }, { columns: ['_id', ...fields.map(valueColumn)] })
    for (const row of rows) {
      const text = (f: FieldDef): string => typeof row[valueColumn(f)] === 'string' ? (row[valueColumn(f)] as string).trim() : ''
      const name = plan.parts.map(text).filter((s) => s !== '').join(' ') || (plan.fallback === undefined ? '' : text(plan.fallback))
      if (name !== '') found.set(row._id as string, name)
    }
  }
  return ids.flatMap((id) => { const nombre = found.get(id); return nombre === undefined ? [] : [{ id, nombre }] })
}

/** `ids` of the query (`USR-2026-00001,PER-2026-00001`; repeated, joined): trimmed, deduplicated; required, at most DIRECTORY_MAX_IDS. */
export function directoryIds (query: unknown): string[] {
  const given = (query as { ids?: unknown } | undefined)?.ids
  const texts = Array.isArray(given) ? given : given === undefined ? [] : [given]
  const ids = [...new Set(texts.flatMap((t) => String(t).split(',')).map((s) => s.trim()).filter((s) => s !== ''))]
  if (ids.length === 0) throw required('ids')
  if (ids.length > DIRECTORY_MAX_IDS) throw invalid('ids', DETAILS.DIRECTORIO_MAXIMO(DIRECTORY_MAX_IDS))
  return ids
}
