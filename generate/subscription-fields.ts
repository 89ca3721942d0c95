/**
 * The subscriptions module's fields as the OpenAPI document shows them
 * (docs/user-guide.md "Webhooks (suscripciones)"): modules.yaml declares
 * them as a plain array, string and password, and the subscriptions policy
 * (records/subscriptions/subscriptions-policy.ts) checks the rest, so the
 * document says here what that check accepts: `modulos` and `tipos` name
 * the registry's modules and event types, `rol` one of its roles, `url` an
 * http(s) address, `secreto` a Standard Webhooks secret. Documentation only.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import type { ModuleDef, Registry } from '../core/registry/types.js'
import { EVENT_KINDS } from '../records/events/feed.js'
import { SECRET_PATTERN } from '../records/subscriptions/subscriptions-policy.js'

/** Each special field's schema, by name, for the registry's subscriptions module. */
export function subscriptionFieldSchemas (mod: ModuleDef, registry: Registry): Readonly<Record<string, TSchema>> {
  const maxItems = (name: string): number | undefined => mod.fieldMap.get(name)?.maxItems
  const modules = registry.modules.map((m) => m.name)
  const kinds = Object.values(EVENT_KINDS)
  return {
    modulos: Type.Array(Type.String({ enum: modules }), { minItems: 1, uniqueItems: true, ...(maxItems('modulos') !== undefined && { maxItems: maxItems('modulos') }) }),
    tipos: Type.Array(Type.String({ enum: modules.flatMap((m) => kinds.map((k) => `${m}.${k}`)), description: 'Un tipo de evento de uno de los módulos suscritos' }), { ...(maxItems('tipos') !== undefined && { maxItems: maxItems('tipos') }) }),
    rol: Type.String({ enum: registry.roles.map((r) => r.name) }),
    url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: mod.fieldMap.get('url')?.maxLength ?? 2000 }),
    secreto: Type.String({ pattern: SECRET_PATTERN, description: 'whsec_ seguido de 24 a 64 bytes en base64' }),
  }
}

/** A subscription the service accepts (a public https address, the first module's creations since a date, the first role). */
export function subscriptionExample (registry: Registry): Record<string, unknown> {
  const first = registry.modules[0]!.name
  return {
    url: 'https://avisos.ejemplo.es/policia',
    modulos: [first],
    tipos: [`${first}.${EVENT_KINDS.crear}`],
    // A list filter of the one module subscribed to (records/subscriptions/subscription-filter.ts).
    filtro: '_created[gte]=2026-06-01 00:00:00',
    rol: registry.roles[0]!.name,
    secreto: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  }
}
