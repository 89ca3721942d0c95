/**
 * Where a webhook may not go (docs/user-guide.md "Webhooks (suscripciones)",
 * docs/operator-guide.md "Webhooks"): a target that resolves to an address
 * that is not public (core/non-public-address.ts: loopback, private,
 * link-local, metadata, every special-purpose range, and the IPv6 forms
 * of them) is refused unless WEBHOOK_ALLOW_PRIVATE=true. Checked when a
 * subscription is written (every address the name resolves to) and again
 * when a delivery connects (a literal address before the request; a name
 * through `guardedLookup`, the socket's lookup, whose addresses are the
 * ones the socket connects to), so a name re-pointed at an internal
 * address after the check (DNS rebinding) gains nothing.
 */
import { isIP } from 'node:net'
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { promisify } from 'node:util'
import { isNonPublicAddress, nonPublicKind } from '../../core/non-public-address.js'

/** The URL's host as an address or name (IPv6 without its brackets). */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '')

/** Why the URL's host may not be a target, or undefined when it may (every address it resolves to is public). */
export async function targetProblem (url: URL): Promise<string | undefined> {
  const host = hostOf(url)
  if (isIP(host) !== 0) {
    const kind = nonPublicKind(host)
    return kind === undefined ? undefined : `la dirección ${host} no es pública (${kind}); WEBHOOK_ALLOW_PRIVATE la admitiría`
  }
  let addresses: LookupAddress[]
  try {
    addresses = await promisify(dnsLookup)(host, { all: true })
  } catch {
    return `no se puede resolver el nombre "${host}"`
  }
  // The address itself is not named: what an internal name resolves to is not the caller's to learn.
  return addresses.some((a) => isNonPublicAddress(a.address)) ? `el nombre "${host}" resuelve a una dirección que no es pública; WEBHOOK_ALLOW_PRIVATE la admitiría` : undefined
}

/** The refusal of a connection to an address that is not public, as a delivery attempt records it. */
export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATE'
  /** `host`: the URL's host (a name or a literal address); `address`: where it led, for the server's log only. */
  constructor (host: string, readonly address: string) {
    super(isIP(host) !== 0 ? `la dirección ${host} no es pública` : `el nombre "${host}" resuelve a una dirección que no es pública`)
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** A socket `lookup` that resolves as node:dns does and refuses the name when any address it resolves to is not public. */
export function guardedLookup (hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err !== null) { callback(err, []); return }
    const bad = addresses.find((a) => isNonPublicAddress(a.address))
    if (bad !== undefined) { callback(new PrivateAddressError(hostname, bad.address), []); return }
    if (options.all === true) callback(null, addresses)
    else callback(null, addresses[0]!.address, addresses[0]!.family)
  })
}
