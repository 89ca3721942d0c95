/**
 * A comma-separated list of addresses and CIDR ranges from the environment
 * (TRUST_PROXY, RATE_LIMIT_IP_EXEMPT). Entries are read as Fastify's
 * `trustProxy` (@fastify/proxy-addr) reads them, a little stricter: an
 * address (IPv4 or IPv6), a CIDR (`10.0.0.0/8`, `fd00::/8`), an IPv4
 * netmask (`10.0.0.0/255.0.0.0`) or one of proxy-addr's names (`loopback`,
 * `linklocal`, `uniquelocal`). Matching is node:net's BlockList, which also
 * matches an IPv4-mapped IPv6 address (`::ffff:10.1.2.3`) against IPv4
 * ranges.
 */
import { BlockList, isIP } from 'node:net'

/** proxy-addr's named ranges, so both variables accept the same words. */
const NAMED: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

export const ADDRESS_LIST_FORMS = 'a comma-separated list of addresses and CIDR ranges (10.0.0.0/8,172.16.0.0/12,127.0.0.1,::1; also loopback, linklocal, uniquelocal)'

export interface AddressList {
  /** The entries as written (trimmed). */
  readonly entries: readonly string[]
  /** Whether a client address falls in one of the entries. */
  includes (address: string): boolean
}

interface Range { readonly network: string, readonly prefix: number, readonly family: 'ipv4' | 'ipv6' }

/** A contiguous IPv4 netmask as a prefix length (255.255.0.0 → 16), or undefined. */
function netmaskPrefix (mask: string): number | undefined {
  if (isIP(mask) !== 4) return undefined
  const n = mask.split('.').reduce((acc, octet) => (acc * 256) + Number(octet), 0)
  const host = 0xffffffff - n
  return (host & (host + 1)) === 0 ? 32 - host.toString(2).replace(/0/g, '').length : undefined
}

/** One entry as the ranges it names, or undefined when it is none of the forms. */
function rangesOf (entry: string): Range[] | undefined {
  const named = NAMED[entry]
  if (named !== undefined) return named.flatMap((e) => rangesOf(e)!)
  const [address = '', prefixText, ...rest] = entry.split('/')
  const kind = isIP(address)
  if (kind === 0 || rest.length > 0 || address.includes('%')) return undefined
  const family = kind === 4 ? 'ipv4' : 'ipv6'
  const max = kind === 4 ? 32 : 128
  let prefix: number | undefined = max
  if (prefixText !== undefined) prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : (kind === 4 ? netmaskPrefix(prefixText) : undefined)
  // proxy-addr refuses /0 too: a range of every address is no list of proxies.
  if (prefix === undefined || prefix < 1 || prefix > max) return undefined
  return [{ network: address, prefix, family }]
}

/**
 * Reads a list; an empty or unset value is the empty list. Returns the
 * entries that are none of the forms in `bad` instead of a list.
 */
export function parseAddressList (raw: string | undefined): { list: AddressList, bad: readonly string[] } {
  const value = (raw ?? '').trim()
  const entries = value === '' ? [] : value.split(',').map((e) => e.trim())
  const blocks = new BlockList()
  const bad: string[] = []
  for (const entry of entries) {
    const ranges = rangesOf(entry)
    if (ranges === undefined) { bad.push(entry); continue }
    for (const r of ranges) blocks.addSubnet(r.network, r.prefix, r.family)
  }
  const list: AddressList = Object.freeze({
    entries: Object.freeze(entries),
    includes: (address: string): boolean => {
      const kind = isIP(address)
      return kind !== 0 && entries.length > 0 && blocks.check(address, kind === 4 ? 'ipv4' : 'ipv6')
    },
  })
  return { list, bad }
}
