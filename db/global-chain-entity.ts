/**
 * The tables of the global chain (docs/operator-guide.md "Tamper evidence: the global chain and checkpoints"):
 * `sys_cadena`, every history entry in the order it was sealed, each linked
 * to the one before; `sys_cadena_estado`, the sealer's watermark (the
 * transaction id below which every history row is sealed); and
 * `sys_puntos_control`, a copy of each signed checkpoint of the chain's head
 * (the evidence that matters is published outside the database too).
 * Written by records/integrity/global-chain.ts and records/integrity/checkpoints.ts.
 */
import { EntitySchema } from '@mikro-orm/core'

export interface ChainEntryRow {
  seq: string
  /** Id of the sys_historial row sealed here. */
  historial: string
  modulo: string
  registro: string
  version: number
  /** SHA-256 of the history row's own columns (records/integrity/global-chain.ts `entryHash`). */
  entrada: string
  /** SHA-256 of the previous link followed by `entrada`. */
  enlace: string
}

export const ChainEntryEntity = new EntitySchema<ChainEntryRow>({
  name: 'sys_cadena',
  tableName: 'sys_cadena',
  properties: {
    seq: { type: 'bigint', primary: true, fieldName: 'seq' },
    historial: { type: 'bigint', fieldName: 'historial', unique: 'sys_cadena_historial_unique' },
    modulo: { type: 'string', length: 63, fieldName: 'modulo' },
    registro: { type: 'string', length: 40, fieldName: 'registro' },
    version: { type: 'integer', fieldName: 'version' },
    entrada: { type: 'string', length: 64, fieldName: 'entrada' },
    enlace: { type: 'string', length: 64, fieldName: 'enlace' },
  },
  indexes: [{ name: 'sys_cadena_modulo_registro_idx', properties: ['modulo', 'registro'] }],
})

export interface ChainStateRow {
  id: number
  /** Every history row whose transaction id is below this is sealed (xid8 as text). */
  marca: string
  /** The chain's identity, written into every checkpoint (records/integrity/chain-identity.ts). */
  cadena?: string | null
}

export const ChainStateEntity = new EntitySchema<ChainStateRow>({
  name: 'sys_cadena_estado',
  tableName: 'sys_cadena_estado',
  properties: {
    id: { type: 'integer', primary: true, autoincrement: false, fieldName: 'id' },
    marca: { type: 'bigint', columnType: 'xid8', fieldName: 'marca' },
    cadena: { type: 'string', length: 32, nullable: true, fieldName: 'cadena' },
  },
})

export interface CheckpointRow {
  id?: string
  seq: string
  cabeza: string
  /** The instant signed, exactly as signed (ISO 8601 UTC). */
  fecha: string
  firma: string
  /** The chain's identity (format 2); null in a format 1 checkpoint. */
  cadena?: string | null
}

export const CheckpointEntity = new EntitySchema<CheckpointRow>({
  name: 'sys_punto_control',
  tableName: 'sys_puntos_control',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true, fieldName: 'id' },
    seq: { type: 'bigint', fieldName: 'seq', index: 'sys_puntos_control_seq_idx' },
    cabeza: { type: 'string', length: 64, fieldName: 'cabeza' },
    fecha: { type: 'string', length: 40, fieldName: 'fecha' },
    firma: { type: 'string', length: 200, fieldName: 'firma' },
    cadena: { type: 'string', length: 32, nullable: true, fieldName: 'cadena' },
  },
})
