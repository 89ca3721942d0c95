/**
 * The delivery state of webhook subscriptions (docs/user-guide.md
 * "Webhooks (suscripciones)"; docs/decisions.md "Webhook delivery state"):
 * kept in the service's own tables, never as record writes, so a delivery
 * makes no event. Written by db/delivery-statements.ts.
 *
 * - `sys_suscripciones_estado`, one row per subscription: its signing
 *   secret (encrypted with the field cipher), the feed position delivered
 *   or given up up to, the failure in progress (since when, attempts, next
 *   attempt), whether it is paused as failing, and the lease: which
 *   instance delivers it, and until when unless it renews.
 * - `sys_entregas`, one row per attempt.
 */
import { EntitySchema } from '@mikro-orm/core'

export interface SubscriptionStateRow {
  suscripcion: string
  /** The secret as the field cipher wrote it (core/crypto.ts). */
  secreto: string
  /** The last feed position delivered, given up or skipped. */
  posicion: string
  fallando_desde?: Date | null
  intentos: number
  proximo_intento?: Date | null
  pausada: boolean
  arrendatario?: string | null
  arriendo_hasta?: Date | null
}

export const SubscriptionStateEntity = new EntitySchema<SubscriptionStateRow>({
  name: 'sys_suscripcion_estado',
  tableName: 'sys_suscripciones_estado',
  properties: {
    suscripcion: { type: 'string', length: 40, primary: true, fieldName: 'suscripcion' },
    secreto: { type: 'text', columnType: 'text', fieldName: 'secreto' },
    posicion: { type: 'bigint', fieldName: 'posicion' },
    fallando_desde: { type: 'datetime', columnType: 'timestamptz', nullable: true, fieldName: 'fallando_desde' },
    intentos: { type: 'integer', fieldName: 'intentos', default: 0 },
    proximo_intento: { type: 'datetime', columnType: 'timestamptz', nullable: true, fieldName: 'proximo_intento' },
    pausada: { type: 'boolean', fieldName: 'pausada', default: false },
    arrendatario: { type: 'string', length: 64, nullable: true, fieldName: 'arrendatario' },
    arriendo_hasta: { type: 'datetime', columnType: 'timestamptz', nullable: true, fieldName: 'arriendo_hasta' },
  },
})

/** What came of one attempt. */
export type DeliveryResult = 'entregado' | 'reintento' | 'descartado' | 'pausada'

export interface DeliveryRow {
  id?: string
  suscripcion: string
  fecha: Date
  posicion: string
  /** The HTTP status answered; null when none came (timeout, connection error, refused address). */
  estado?: number | null
  latencia_ms: number
  error?: string | null
  resultado: DeliveryResult
}

export const DeliveryEntity = new EntitySchema<DeliveryRow>({
  name: 'sys_entrega',
  tableName: 'sys_entregas',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true, fieldName: 'id' },
    suscripcion: { type: 'string', length: 40, fieldName: 'suscripcion' },
    fecha: { type: 'datetime', columnType: 'timestamptz', fieldName: 'fecha' },
    posicion: { type: 'bigint', fieldName: 'posicion' },
    estado: { type: 'integer', nullable: true, fieldName: 'estado' },
    latencia_ms: { type: 'integer', fieldName: 'latencia_ms' },
    error: { type: 'text', columnType: 'text', nullable: true, fieldName: 'error' },
    resultado: { type: 'string', length: 12, fieldName: 'resultado' },
  },
  indexes: [{ name: 'sys_entregas_suscripcion_idx', properties: ['suscripcion', 'id'] }],
})
