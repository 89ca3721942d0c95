/**
 * Where a webhook may not go (docs/user-guide.md "Webhooks (suscripciones)",
 * docs/operator-guide.md "Webhooks"): a target that resolves to a
 * loopback, private, link-local, metadata or otherwise non-public address
 * is refused unless WEBHOOK_ALLOW_PRIVATE=true. Checked when a
 * subscription is written (every address the name resolves to) and again
 * when a delivery connects (the address actually connected to:
 * `guardedLookup` is the socket's lookup), so a name that resolves
 * elsewhere later gains nothing.
 */
import { BlockList, isIP } from 'node:net'
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { promisify } from 'node:util'

const RANGES: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'], // link-local, and the cloud metadata address 169.254.169.254
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments (some clouds' metadata)
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['224.0.0.0', 3, 'ipv4'], // multicast, reserved, broadcast
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'], // NAT64 of any IPv4 address, private ones included
  ['fc00::', 7, 'ipv6'], // unique local (and fd00:ec2::254, a metadata address)
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
]

const BLOCKED = new BlockList()
for (const [net, prefix, family] of RANGES) BLOCKED.addSubnet(net, prefix, family)
// A few metadata services answer on a public-looking address.
BLOCKED.addAddress('100.100.100.200', 'ipv4')

/** Whether an address is one a webhook may not reach. */
export function isPrivateAddress (address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/** Why the URL's host may not be a target, or undefined when it may (every address it resolves to is public). */
export async function targetProblem (url: URL): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: LookupAddress[]
  try {
    addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await promisify(dnsLookup)(host, { all: true })
  } catch {
    return `no se puede resolver el nombre "${host}"`
  }
  const bad = addresses.find((a) => isPrivateAddress(a.address))
  return bad === undefined ? undefined : `la dirección ${bad.address} es de bucle local, privada, de enlace local o de metadatos (WEBHOOK_ALLOW_PRIVATE)`
}

/** The refusal of a connection to a private address, as a delivery attempt records it. */
export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATE'
  constructor (address: string) {
    super(`la dirección ${address} es de bucle local, privada, de enlace local o de metadatos`)
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** A socket `lookup` that resolves as node:dns does and refuses private addresses. */
export function guardedLookup (hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err !== null) { callback(err, []); return }
    const bad = addresses.find((a) => isPrivateAddress(a.address))
    if (bad !== undefined) { callback(new PrivateAddressError(bad.address), []); return }
    if (options.all === true) callback(null, addresses)
    else callback(null, addresses[0]!.address, addresses[0]!.family)
  })
}
