/**
 * A webhook subscription as the deliverer reads it (docs/user-guide.md
 * "Webhooks (suscripciones)"): the record of the subscriptions module
 * (modules.yaml `subscriptions: true`, its fields checked by
 * core/registry/subscriptions-module.ts), read straight from its table.
 */
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import { entityName, type Row } from '../../db/module-entity.js'
import { findRow } from '../../db/row-query.js'

export interface Subscription {
  readonly id: string
  readonly url: string
  readonly modulos: readonly string[]
  /** Empty: every kind. */
  readonly tipos: readonly string[]
  readonly filtro: string | null
  readonly rol: string
  readonly activa: boolean
}

const col = (mod: ModuleDef, name: string): string => valueColumn(mod.fieldMap.get(name)!)

const names = (v: unknown): string[] => Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []

/** A stored row of the subscriptions module as a Subscription. */
export function subscriptionOf (mod: ModuleDef, row: Row): Subscription {
  const filtro = row[col(mod, 'filtro')]
  return {
    id: row._id as string,
    url: row[col(mod, 'url')] as string,
    modulos: names(row[col(mod, 'modulos')]),
    tipos: names(row[col(mod, 'tipos')]),
    filtro: typeof filtro === 'string' && filtro !== '' ? filtro : null,
    rol: row[col(mod, 'rol')] as string,
    activa: row[col(mod, 'activa')] !== false,
  }
}

/** The live (not deleted) subscription `id`, or undefined. */
export async function readSubscription (em: Db, mod: ModuleDef, id: string): Promise<Subscription | undefined> {
  const row = await findRow(em, entityName(mod), { _id: id, _deleted: null })
  return row === null ? undefined : subscriptionOf(mod, row)
}

/**
 * Who a subscription reads as (docs/user-guide.md "Webhooks (suscripciones)"): its
 * id, so the read log names it, with its role's permissions. It owns no
 * record and has no staff record: a role's own-only permissions reach nothing.
 */
export function subscriberOf (sub: Subscription): Caller {
  return { id: sub.id, username: sub.id, rol: sub.rol, personalId: null }
}
