/**
 * How each declared field maps to storage: column name and MikroORM column
 * definition. Shared by the entity builder and the record mapper so the two
 * never disagree.
 */
import type { FieldDef } from '../core/registry/types.js'

/** Column holding the field's value (a password field stores only its hash). */
export function valueColumn (f: FieldDef): string {
  return f.type === 'password' ? `${f.column}_hash` : f.column
}

/** Column holding the blind index of a searchable encrypted field. */
export function blindIndexColumn (f: FieldDef): string {
  return `${f.column}_bidx`
}

export interface ColumnSpec {
  type: string
  columnType?: string
  length?: number
  precision?: number
  scale?: number
}

export function columnSpec (f: FieldDef): ColumnSpec {
  if (f.encrypted) return { type: 'text', columnType: 'text' }
  switch (f.type) {
    case 'string': return { type: 'string', length: f.maxLength ?? 500 }
    case 'text': return { type: 'text', columnType: 'text' }
    case 'integer': return { type: 'integer' }
    case 'decimal': return { type: 'decimal', precision: 14, scale: 2 }
    case 'boolean': return { type: 'boolean' }
    case 'date': return { type: 'date' }
    case 'datetime': return { type: 'datetime', columnType: 'timestamptz' }
    case 'time': return { type: 'time', columnType: 'time(0)' }
    case 'array': return { type: 'json', columnType: 'jsonb' }
    case 'ref': return { type: 'string', length: 40 }
    case 'password': return { type: 'string', length: 255 }
  }
}

/** Fields that get a b-tree index (filterable scalars; text and encrypted values never). */
export function isIndexed (f: FieldDef): boolean {
  return f.filterable && f.type !== 'text' && !f.encrypted
}
