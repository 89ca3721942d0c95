/**
 * What is special about the subscriptions module (modules.yaml
 * `subscriptions: true`; docs/user-guide.md "Webhooks (suscripciones)"), as
 * a subscriber of the records hook bus (records/hooks.ts):
 * - `before` a create or an update: the url is http(s) and, unless
 *   WEBHOOK_ALLOW_PRIVATE=true, resolves only to public addresses
 *   (target-address.ts); `modulos` names modules; `tipos` names kinds of
 *   those modules (`sala092.creado`); `filtro` is a list filter of the one
 *   module it may be given with;
 * - `inside` a create: the delivery state row (db/subscription-entities.ts)
 *   with the secret encrypted and the feed's head as its position (events
 *   from the subscription's creation on); inside an update that sets a new
 *   secret, the secret. Nothing else of the delivery is a record write;
 * - `after` any write: the deliverers hear of it (a new, resumed or
 *   changed subscription is taken up at once).
 */
import { randomBytes } from 'node:crypto'
import type { FieldCipher } from '../../core/crypto.js'
import { invalid } from '../../core/errors.js'
import type { ModuleDef, Registry } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import { insertState, setSecret } from '../../db/delivery-statements.js'
import { chainHead } from '../../db/feed-statements.js'
import type { HookBus, WriteEvent } from '../hooks.js'
import { EVENT_KINDS } from '../events/feed.js'
import { parseFilter } from './subscription-filter.js'
import { targetProblem } from './target-address.js'

export interface SubscriptionsPolicyDeps {
  readonly registry: Registry
  readonly cipher: FieldCipher
  readonly timeZone: string
  readonly allowPrivate: boolean
  /** A subscription was written (committed). */
  readonly changed: () => void
}

/** A new signing secret, as Standard Webhooks writes them (`whsec_` and 32 random bytes in base64). */
export function generateSecret (): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/**
 * A Standard Webhooks secret in its canonical form: `whsec_` and 24 to 64
 * bytes in padded base64 (8 to 21 groups of four, a last group of 63 or 64
 * bytes padded). What the OpenAPI document shows; isSecret also takes the
 * unpadded form.
 */
const B64 = '[A-Za-z0-9+/]'
export const SECRET_PATTERN = `^whsec_(?:(?:${B64}{4}){8,21}|(?:${B64}{4}){8,20}${B64}{2}(?:${B64}=|==)|(?:${B64}{4}){21}${B64}{2}==)$`

/** A Standard Webhooks secret: `whsec_` and 24 to 64 bytes in base64. */
function isSecret (text: string): boolean {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(text)
  if (m === null) return false
  const bytes = Buffer.from(m[1]!, 'base64').length
  return bytes >= 24 && bytes <= 64
}

/** The secret as stored: encrypted with the field cipher, bound to the subscription. */
export function sealSecret (cipher: FieldCipher, id: string, secret: string): string {
  return cipher.encrypt(secret, id, 'secreto')
}

export function subscribeSubscriptionsPolicy (hooks: HookBus, mod: ModuleDef, deps: SubscriptionsPolicyDeps): void {
  const field = (name: string) => mod.fieldMap.get(name)!
  const secreto = field('secreto')
  /** The value after the write: the one sent, else the stored one. */
  const valueOf = ({ values, before }: WriteEvent, name: string): unknown => {
    const f = field(name)
    return values.has(f) ? values.get(f) : before?.[valueColumn(f)]
  }
  const kinds = new Set(Object.values(EVENT_KINDS))

  hooks.on(mod.name, 'before', async (event) => {
    if (event.action !== 'crear' && event.action !== 'editar') return
    const modulos = (valueOf(event, 'modulos') ?? []) as unknown[]
    if (modulos.length === 0) throw invalid('modulos', 'nombre al menos un módulo')
    for (const m of modulos) {
      if (typeof m !== 'string' || !deps.registry.byName.has(m)) throw invalid('modulos', `"${String(m)}" no es un módulo; los módulos son ${[...deps.registry.byName.keys()].join(', ')}`)
    }
    if (new Set(modulos).size !== modulos.length) throw invalid('modulos', 'un módulo aparece más de una vez')
    for (const t of (valueOf(event, 'tipos') ?? []) as unknown[]) {
      const [m, kind] = typeof t === 'string' ? t.split('.') : []
      if (m === undefined || !modulos.includes(m) || kind === undefined || !kinds.has(kind)) {
        throw invalid('tipos', `"${String(t)}" no es un tipo de evento de los módulos suscritos (<módulo>.${[...kinds].join('|')})`)
      }
    }
    const rol = valueOf(event, 'rol')
    if (typeof rol !== 'string' || !deps.registry.roleMap.has(rol)) throw invalid('rol', `"${String(rol)}" no es un rol; los roles son ${[...deps.registry.roleMap.keys()].join(', ')}`)
    const filtro = valueOf(event, 'filtro')
    if (typeof filtro === 'string' && filtro !== '') {
      if (modulos.length !== 1) throw invalid('filtro', 'un filtro solo se admite en una suscripción a un único módulo')
      parseFilter(deps.registry.byName.get(modulos[0] as string)!, filtro, deps.timeZone, deps.cipher)
    }
    const secret = event.values.get(secreto)
    // Every delivery is signed: a secret may be replaced, never removed.
    if (event.values.has(secreto) && (secret === null || secret === undefined)) throw invalid('secreto', 'no puede quedar vacío: cada entrega se firma con él; envíe un secreto nuevo u omita el campo')
    if (typeof secret === 'string' && !isSecret(secret)) throw invalid('secreto', 'debe ser whsec_ seguido de 24 a 64 bytes en base64 (como los genera el servicio)')
    if (event.values.has(field('url'))) await checkUrl(event.values.get(field('url')) as string, deps.allowPrivate)
  })

  hooks.on(mod.name, 'inside', async ({ action, values, after, em }) => {
    const id = after!._id as string
    const given = values.get(secreto) as string | undefined
    // The head read in the write's transaction: the embedded database has one connection, and a read beside the transaction would wait for it.
    if (action === 'crear') await insertState(em!, id, sealSecret(deps.cipher, id, given ?? generateSecret()), await chainHead(em!))
    else if (given !== undefined) await setSecret(em!, id, sealSecret(deps.cipher, id, given))
  })

  hooks.on(mod.name, 'after', () => { deps.changed() })
}

async function checkUrl (raw: string, allowPrivate: boolean): Promise<void> {
  let url: URL
  try { url = new URL(raw) } catch { throw invalid('url', 'no es una dirección válida (https://…)') }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url', 'la dirección debe empezar por https:// o http://')
  if (url.username !== '' || url.password !== '') throw invalid('url', 'la dirección no puede llevar usuario ni contraseña')
  if (allowPrivate) return
  const problem = await targetProblem(url)
  if (problem !== undefined) throw invalid('url', problem)
}
