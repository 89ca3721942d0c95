/**
 * What storage a value needs, in the words of a MikroORM property
 * definition but without importing MikroORM: field types and the system
 * fields describe their columns here, db/ turns them into an entity.
 */
export interface ColumnSpec {
  type: string
  columnType?: string
  length?: number
  precision?: number
  scale?: number
}
