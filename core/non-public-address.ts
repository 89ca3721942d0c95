/**
 * Which IP addresses are not public (docs/operator-guide.md "Webhooks",
 * "Targets"): every range of the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries, multicast, and IPv6 outside global unicast
 * (2000::/3). An IPv6 address that carries an IPv4 one the network
 * translates to (IPv4-mapped `::ffff:a.b.c.d`, NAT64's well-known prefix
 * `64:ff9b::a.b.c.d`) is judged by that IPv4 address, so a NAT64 network's
 * synthesised addresses of public hosts still pass; forms whose IPv4 part
 * cannot be told or that nothing public uses (IPv4-compatible `::/96`,
 * NAT64 local-use `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo and the rest
 * of `2001::/23`) are refused whole (docs/decisions.md "Webhook targets").
 */
import { BlockList, isIP } from 'node:net'

type Family = 'ipv4' | 'ipv6'

/** [network, prefix length, what it is] */
const IPV4: ReadonlyArray<readonly [string, number, string]> = [
  ['0.0.0.0', 8, 'esta red'],
  ['10.0.0.0', 8, 'privada'],
  ['100.64.0.0', 10, 'espacio compartido (CGNAT)'],
  ['127.0.0.0', 8, 'bucle local'],
  ['169.254.0.0', 16, 'enlace local (y metadatos en la nube)'],
  ['172.16.0.0', 12, 'privada'],
  ['192.0.0.0', 24, 'asignaciones de protocolo del IETF'],
  ['192.0.2.0', 24, 'documentación'],
  ['192.31.196.0', 24, 'AS112'],
  ['192.52.193.0', 24, 'AMT'],
  ['192.88.99.0', 24, 'relé 6to4 (obsoleto)'],
  ['192.168.0.0', 16, 'privada'],
  ['192.175.48.0', 24, 'AS112 (delegación directa)'],
  ['198.18.0.0', 15, 'pruebas de rendimiento'],
  ['198.51.100.0', 24, 'documentación'],
  ['203.0.113.0', 24, 'documentación'],
  ['224.0.0.0', 4, 'multidifusión'],
  ['240.0.0.0', 4, 'reservada (y difusión 255.255.255.255)'],
  // A cloud metadata service on a public-looking address.
  ['100.100.100.200', 32, 'metadatos'],
]

const IPV6: ReadonlyArray<readonly [string, number, string]> = [
  ['::', 128, 'sin especificar'],
  ['::1', 128, 'bucle local'],
  ['::', 96, 'IPv4 compatible (obsoleta)'],
  ['64:ff9b:1::', 48, 'NAT64 de uso local'],
  ['100::', 64, 'descarte'],
  ['100:0:0:1::', 64, 'prefijo ficticio'],
  ['2001::', 23, 'asignaciones de protocolo del IETF (Teredo, pruebas, ORCHID)'],
  ['2001:db8::', 32, 'documentación'],
  ['2002::', 16, '6to4'],
  ['2620:4f:8000::', 48, 'AS112 (delegación directa)'],
  ['3fff::', 20, 'documentación'],
  ['5f00::', 16, 'SRv6'],
  ['fc00::', 7, 'local única (y metadatos fd00:ec2::254)'],
  ['fe80::', 10, 'enlace local'],
  ['ff00::', 8, 'multidifusión'],
]

function table (rows: ReadonlyArray<readonly [string, number, string]>, family: Family): Array<{ list: BlockList, what: string }> {
  return rows.map(([net, prefix, what]) => {
    const list = new BlockList()
    list.addSubnet(net, prefix, family)
    return { list, what }
  })
}

const V4 = table(IPV4, 'ipv4')
const V6 = table(IPV6, 'ipv6')
const GLOBAL_UNICAST = new BlockList()
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6')

/** The eight 16-bit groups of a valid IPv6 address (no zone). */
function groups (address: string): number[] {
  let text = address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const part = (s: string | undefined): number[] => (s === undefined || s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)))
  const left = part(head)
  const right = part(tail)
  return tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
}

const v4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`

/** The IPv4 address an IPv6 one is translated to on the way (IPv4-mapped, NAT64 well-known prefix), if any. */
function translatedV4 (g: number[]): string | undefined {
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 5) && g[5] === 0xffff) return v4Of(g[6]!, g[7]!)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4Of(g[6]!, g[7]!)
  return undefined
}

/**
 * What kind of non-public address this is (Spanish, for the 400's detail),
 * or undefined when it is public. Anything that is not an IP address (a
 * zone index included) is not public.
 */
export function nonPublicKind (address: string): string | undefined {
  const family = isIP(address)
  if (family === 4) return V4.find((r) => r.list.check(address, 'ipv4'))?.what
  if (family !== 6 || address.includes('%')) return 'no es una dirección IP'
  const g = groups(address.toLowerCase())
  const v4 = translatedV4(g)
  if (v4 !== undefined) {
    const kind = nonPublicKind(v4)
    return kind === undefined ? undefined : `${kind}, en forma IPv6`
  }
  const found = V6.find((r) => r.list.check(address, 'ipv6'))?.what
  if (found !== undefined) return found
  return GLOBAL_UNICAST.check(address, 'ipv6') ? undefined : 'fuera del espacio unicast global'
}

/** Whether an address is not public. */
export function isNonPublicAddress (address: string): boolean {
  return nonPublicKind(address) !== undefined
}
