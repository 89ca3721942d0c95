/**
 * The read log (`sys_lecturas`), written by records/read-log.ts: reads of
 * decrypted data (`lectura`, one row per record), lists filtered on an
 * encrypted field (`busqueda`, one row per list: no record, the number of
 * matches, never the value searched for) and exports that let decrypted
 * values out (`exportar`, one row per export: its filter, encrypted values masked).
 */
import { EntitySchema } from '@mikro-orm/core'

/**
 * `descarga`: an encrypted evidence file downloaded; `acceso`: a plain one (the access log); `filtro` holds the file's id (records/files/custody.ts).
 * `documento`: a record printed (records/documents/), its decrypted fields in `campos`.
 * `interesado`: a search of a person's records by DNI (records/data-protection/interested-party.ts): the modules it found records in, never the DNI.
 * `bloqueado`: a blocked record read (by a data-protection officer or a superadmin), its decrypted fields in `campos`.
 */
export type ReadLogKind = 'lectura' | 'busqueda' | 'exportar' | 'descarga' | 'acceso' | 'documento' | 'interesado' | 'bloqueado'

export interface ReadLogRow {
  id?: string
  /** Absent: `lectura`. */
  tipo?: ReadLogKind
  usuario: string
  fecha: Date
  modulo: string
  /** The record read; '' for a `busqueda`. */
  registro: string
  /** Encrypted fields read, or filtered on. */
  campos: string[]
  /** Method and route that served it, e.g. `GET /personal/:id`. */
  ruta: string
  /** A `busqueda`'s number of matches (the list's total); null for a `lectura`. */
  coincidencias?: number | null
  /** An `exportar`'s query string, values of encrypted filters masked (records/export-query.ts); null otherwise. */
  filtro?: string | null
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
    tipo: { type: 'string', length: 10, fieldName: 'tipo', default: 'lectura' },
    coincidencias: { type: 'integer', fieldName: 'coincidencias', nullable: true },
    filtro: { type: 'text', columnType: 'text', fieldName: 'filtro', nullable: true },
  },
  indexes: [{ name: 'sys_lecturas_modulo_registro_idx', properties: ['modulo', 'registro'] }],
})
