/**
 * Append-only history (SPEC S7): every version of every record — create,
 * each update, delete, restore — as the full stored row (encrypted values
 * stay encrypted), written in the same transaction as the change. One table
 * for all modules, so a module added to modules.yaml needs nothing more.
 */
import { EntitySchema } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { ModuleDef } from '../core/registry/types.js'
import type { Row } from '../db/module-entity.js'
import { CURRENT_SEAL_FORMAT, sealOf } from './seal-format.js'

export type HistoryAction = 'crear' | 'editar' | 'eliminar' | 'restaurar'

export interface HistoryRow {
  id?: string
  modulo: string
  registro: string
  version: number
  accion: HistoryAction
  usuario: string
  fecha: Date
  hash: string
  /** Declared fields whose value this version changed. */
  campos: string[]
  /** The stored row of this version, system columns included. */
  datos: Row
  /**
   * Seal format of `hash` (seal-format.ts). The column came with format 2:
   * its default 1 is what the rows written before it read as.
   */
  sello: number
}

export const HistoryEntity = new EntitySchema<HistoryRow>({
  name: 'sys_historial',
  tableName: 'sys_historial',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true, fieldName: 'id' },
    modulo: { type: 'string', length: 63, fieldName: 'modulo' },
    registro: { type: 'string', length: 40, fieldName: 'registro' },
    version: { type: 'integer', fieldName: 'version' },
    accion: { type: 'string', length: 16, fieldName: 'accion' },
    usuario: { type: 'string', length: 40, fieldName: 'usuario', index: true },
    fecha: { type: 'datetime', columnType: 'timestamptz', fieldName: 'fecha' },
    hash: { type: 'string', length: 64, fieldName: 'hash' },
    campos: { type: 'json', columnType: 'jsonb', fieldName: 'campos' },
    datos: { type: 'json', columnType: 'jsonb', fieldName: 'datos' },
    sello: { type: 'smallint', fieldName: 'sello', default: 1 },
  },
  uniques: [{ name: 'sys_historial_version_unique', properties: ['modulo', 'registro', 'version'] }],
})

export async function appendVersion (em: EntityManager, mod: ModuleDef, row: Row, accion: HistoryAction, campos: string[]): Promise<void> {
  await em.insert(HistoryEntity, {
    modulo: mod.name,
    registro: row._id as string,
    version: row._version as number,
    accion,
    usuario: row._modified_by as string,
    fecha: row._modified as Date,
    hash: row._hash as string,
    campos,
    datos: row,
    sello: CURRENT_SEAL_FORMAT,
  })
}

/** Every stored version of a record, oldest first. */
export async function versionsOf (em: EntityManager, mod: ModuleDef, id: string): Promise<HistoryRow[]> {
  return em.find(HistoryEntity, { modulo: mod.name, registro: id }, { orderBy: { version: 'asc' } })
}

/**
 * What an auditor needs, beside the record, to recompute one version's
 * `_hash` (README "The hash chain"): its seal format and, for format 1, the
 * fields it was sealed with.
 */
export function sealInfo (mod: ModuleDef, entry: HistoryRow): { sello: number, campos_sellados?: string[] } {
  const seal = sealOf(mod, entry)
  return seal.format === 1 ? { sello: 1, campos_sellados: [...seal.fields] } : { sello: seal.format }
}
