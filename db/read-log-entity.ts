/** The table of reads of decrypted data (`sys_lecturas`), written by records/read-log.ts. */
import { EntitySchema } from '@mikro-orm/core'

export interface ReadLogRow {
  id?: string
  usuario: string
  fecha: Date
  modulo: string
  registro: string
  campos: string[]
  /** Method and route that served it, e.g. `GET /personal/:id`. */
  ruta: string
}

export const ReadLogEntity = new EntitySchema<ReadLogRow>({
  name: 'sys_lectura',
  tableName: 'sys_lecturas',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true, fieldName: 'id' },
    usuario: { type: 'string', length: 40, fieldName: 'usuario', index: true },
    fecha: { type: 'datetime', columnType: 'timestamptz', fieldName: 'fecha', index: true },
    modulo: { type: 'string', length: 63, fieldName: 'modulo' },
    registro: { type: 'string', length: 40, fieldName: 'registro', index: true },
    campos: { type: 'json', columnType: 'jsonb', fieldName: 'campos' },
    ruta: { type: 'string', length: 200, fieldName: 'ruta' },
  },
  indexes: [{ name: 'sys_lecturas_modulo_registro_idx', properties: ['modulo', 'registro'] }],
})
