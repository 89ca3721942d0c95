/**
 * The data-protection officer's tables (docs/user-guide.md "Personal data";
 * docs/operator-guide.md "Retention review"):
 * - `sys_proteccion_datos`, the officer's decisions on a record, kept for
 *   good: prolong (with the new date), block, unblock, erase;
 * - `sys_revision`, the records the last review found due (rewritten by
 *   each run, records/data-protection/retention-review.ts);
 * - `sys_revision_ejecuciones`, one row per day the review ran, which is
 *   how instances agree that it runs once a day.
 */
import { EntitySchema } from '@mikro-orm/core'

export type DecisionKind = 'prolongar' | 'bloquear' | 'desbloquear' | 'suprimir'

export interface DecisionRow {
  id?: string
  fecha: Date
  usuario: string
  modulo: string
  registro: string
  accion: DecisionKind
  motivo: string
  /** A prolongation's new date (`YYYY-MM-DD`); null otherwise. */
  hasta: string | null
}

export const DecisionEntity = new EntitySchema<DecisionRow>({
  name: 'sys_decision_datos',
  tableName: 'sys_proteccion_datos',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true, fieldName: 'id' },
    fecha: { type: 'datetime', columnType: 'timestamptz', fieldName: 'fecha' },
    usuario: { type: 'string', length: 40, fieldName: 'usuario' },
    modulo: { type: 'string', length: 63, fieldName: 'modulo' },
    registro: { type: 'string', length: 40, fieldName: 'registro' },
    accion: { type: 'string', length: 12, fieldName: 'accion' },
    motivo: { type: 'text', columnType: 'text', fieldName: 'motivo' },
    hasta: { type: 'string', columnType: 'date', fieldName: 'hasta', nullable: true },
  },
  indexes: [{ name: 'sys_proteccion_datos_registro_idx', properties: ['modulo', 'registro'] }],
})

export interface DueRow {
  modulo: string
  registro: string
  desde: string
  vence: string
  calculada: Date
}

export const DueEntity = new EntitySchema<DueRow>({
  name: 'sys_revision',
  tableName: 'sys_revision',
  properties: {
    modulo: { type: 'string', length: 63, fieldName: 'modulo', primary: true },
    registro: { type: 'string', length: 40, fieldName: 'registro', primary: true },
    desde: { type: 'string', columnType: 'date', fieldName: 'desde' },
    vence: { type: 'string', columnType: 'date', fieldName: 'vence' },
    calculada: { type: 'datetime', columnType: 'timestamptz', fieldName: 'calculada' },
  },
})

export interface ReviewRunRow {
  dia: string
  fecha: Date
  total: number
  instancia: string
}

export const ReviewRunEntity = new EntitySchema<ReviewRunRow>({
  name: 'sys_revision_ejecucion',
  tableName: 'sys_revision_ejecuciones',
  properties: {
    dia: { type: 'string', columnType: 'date', fieldName: 'dia', primary: true },
    fecha: { type: 'datetime', columnType: 'timestamptz', fieldName: 'fecha' },
    total: { type: 'integer', fieldName: 'total' },
    instancia: { type: 'string', length: 200, fieldName: 'instancia' },
  },
})
