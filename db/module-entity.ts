/**
 * Builds the MikroORM EntitySchema of a module: one table named after the
 * module, one column per field (docs/administrator-guide.md "modules.yaml reference"), the system columns, the list
 * indexes (db/record-indexes.ts: every indexed field over the live rows),
 * the search indexes (db/search-sql.ts: those modules.yaml declares) and a
 * unique constraint for every unique one.
 * Every user column is nullable: required-ness and defaults are enforced by
 * the API, so changing them in modules.yaml never needs a migration.
 */
import { EntitySchema } from '@mikro-orm/core'
import type { ModuleDef } from '../core/registry/types.js'
import { SYSTEM_FIELDS } from '../core/system-fields.js'
import { BLOCKED_COLUMN, blindIndexColumn, columnSpec, itemIndexColumn, searchableItems, valueColumn } from './columns.js'
import { storedName } from './identifier.js'
import { recordIndexes } from './record-indexes.js'
import { documentColumn, searchIndexes } from './search-sql.js'

export type Row = Record<string, unknown>

export function buildEntity (mod: ModuleDef): EntitySchema<Row> {
  // Property definitions are built from data, so they are typed loosely here.
  const properties: Record<string, Record<string, unknown>> = {}
  for (const s of SYSTEM_FIELDS) {
    // `_created_by`, `_modified`, `_modified_by` keep their index unless the module leaves it out (`system_fields`).
    const { index, ...column } = s.column
    properties[s.name] = { ...column, ...(index === true && mod.indexedSystemFields.includes(s.name) && { index: true }), fieldName: s.name }
  }
  for (const f of mod.fields) {
    const column = valueColumn(f)
    properties[column] = {
      ...columnSpec(f),
      fieldName: column,
      nullable: true,
      ...(f.unique && !f.encrypted ? { unique: storedName(`${mod.table}_${column}_unique`) } : {}),
    }
    if (searchableItems(f).length > 0) {
      const col = itemIndexColumn(f)
      properties[col] = { type: 'json', columnType: 'jsonb', fieldName: col, nullable: true }
    }
    if (f.searchable) {
      const bidx = blindIndexColumn(f)
      properties[bidx] = {
        type: 'string', length: 64, fieldName: bidx, nullable: true,
        ...(f.unique ? { unique: storedName(`${mod.table}_${bidx}_unique`) } : { index: storedName(`${mod.table}_${bidx}_idx`) }),
      }
    }
  }
  if (mod.personalData) properties[BLOCKED_COLUMN] = { type: 'datetime', columnType: 'timestamptz', fieldName: BLOCKED_COLUMN, nullable: true }
  // The stored search document (a generated column): never selected, never written by the ORM.
  const doc = documentColumn(mod)
  if (doc !== undefined) {
    properties[doc.name] = { type: 'unknown', columnType: 'tsvector', fieldName: doc.name, nullable: true, lazy: true, generated: `(${doc.expression}) stored` }
  }
  // Expression indexes (lists, search): MikroORM creates them when missing and compares them by name.
  const indexes = [...recordIndexes(mod), ...searchIndexes(mod)].map((i) => ({ name: i.name, expression: i.expression }))
  return new EntitySchema<Row>({ name: entityName(mod), tableName: mod.table, properties: properties as never, indexes })
}

/** ORM entity name of a module (kept apart from system entity names). */
export function entityName (mod: Pick<ModuleDef, 'name'>): string {
  return `mod_${mod.name}`
}
