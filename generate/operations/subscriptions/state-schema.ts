/** A subscription's delivery state as the API shows it (records/subscriptions/subscription-admin.ts `StateView`). */
import { Type } from '@sinclair/typebox'

export const StateSchema = Type.Object({
  posicion: Type.Integer({ description: 'Última posición del flujo entregada, descartada o saltada' }),
  pausada: Type.Boolean({ description: 'Pausada por fallos: se reanuda con POST /suscripciones/{id}/reanudar' }),
  fallando_desde: Type.Union([Type.String(), Type.Null()]),
  intentos: Type.Integer({ description: 'Intentos fallidos del evento en curso' }),
  proximo_intento: Type.Union([Type.String(), Type.Null()]),
})
