/**
 * Row-level scope (docs/user-guide.md "Authentication and roles"): which records are the caller's own. One
 * definition, in two forms that cannot drift apart: a condition the service
 * adds to every query it runs (lists and their totals, GET, PUT, DELETE,
 * history, verification), and a predicate over a row already read (may this
 * visible record be edited, deleted, decrypted?). Pure.
 */
import type { Caller, Scope } from '../core/access.js'
import type { ModuleDef } from '../core/registry/types.js'
import { valueColumn } from '../db/columns.js'
import type { Row } from '../db/module-entity.js'
import type { Where } from '../db/where-sql.js'

/** A query's conditions: the one form, compiled by db/where-sql.ts. */
export type { Where }

/** The caller's own records: created by them, or tied to their staff record by an owner field. */
export function ownCondition (mod: ModuleDef, caller: Caller): Where {
  const any: Where[] = [{ _created_by: caller.id }]
  if (caller.personalId !== null) {
    if (mod.ownedById) any.push({ _id: caller.personalId })
    for (const f of mod.ownerFields) any.push({ [valueColumn(f)]: caller.personalId })
  }
  return any.length === 1 ? any[0]! : { $or: any }
}

/** The same rule over a stored row. */
export function isOwn (mod: ModuleDef, caller: Caller, row: Row): boolean {
  if (row._created_by === caller.id) return true
  if (caller.personalId === null) return false
  if (mod.ownedById && row._id === caller.personalId) return true
  return mod.ownerFields.some((f) => row[valueColumn(f)] === caller.personalId)
}

/** Condition a scope adds to a query: none for `all`; `own` narrows to own records. */
export function scopeCondition (scope: Scope, mod: ModuleDef, caller: Caller): Where | undefined {
  return scope === 'own' ? ownCondition(mod, caller) : undefined
}

/** Whether a scope reaches a row already read. */
export function reaches (scope: Scope, mod: ModuleDef, caller: Caller, row: Row): boolean {
  return scope === 'all' || (scope === 'own' && isOwn(mod, caller, row))
}

/** AND of conditions, leaving out the absent ones. */
export function and (...parts: Array<Where | undefined>): Where {
  const present = parts.filter((p): p is Where => p !== undefined && Object.keys(p).length > 0)
  return present.length === 0 ? {} : present.length === 1 ? present[0]! : { $and: present }
}
