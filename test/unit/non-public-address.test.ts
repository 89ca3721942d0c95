/**
 * Which webhook targets are not public (core/non-public-address.ts;
 * docs/operator-guide.md "Webhooks"): one row per range of the IANA
 * special-purpose registries and per IPv6 form that carries an IPv4
 * address, each with a public address beside it that passes.
 */
import { describe, expect, it } from 'vitest'
import { isNonPublicAddress, nonPublicKind } from '../../core/non-public-address.js'

/** [address, refused] */
const TABLE: ReadonlyArray<readonly [string, boolean]> = [
  // IPv4 special-purpose registry, and the edges around it.
  ['0.0.0.0', true], ['0.255.255.255', true],
  ['10.0.0.1', true], ['10.255.255.255', true], ['11.0.0.1', false],
  ['100.64.0.1', true], ['100.127.255.255', true], ['100.63.255.255', false], ['100.128.0.0', false],
  ['127.0.0.1', true], ['127.8.9.10', true],
  ['169.254.169.254', true], ['169.255.0.1', false],
  ['172.16.0.1', true], ['172.31.255.255', true], ['172.15.255.255', false], ['172.32.0.1', false],
  ['192.0.0.1', true], ['192.0.0.170', true], ['192.0.1.1', false],
  ['192.0.2.1', true], ['192.0.2.2', true], ['192.0.3.1', false],
  ['192.31.196.1', true], ['192.52.193.1', true], ['192.175.48.1', true],
  ['192.88.99.1', true], ['192.88.100.1', false],
  ['192.168.0.1', true], ['192.169.0.1', false],
  ['198.18.0.1', true], ['198.19.255.255', true], ['198.20.0.1', false], ['198.17.255.255', false],
  ['198.51.100.7', true], ['198.51.101.7', false],
  ['203.0.113.9', true], ['203.0.114.9', false],
  ['224.0.0.1', true], ['239.255.255.250', true],
  ['240.0.0.1', true], ['255.255.255.255', true], ['223.255.255.254', false],
  ['100.100.100.200', true],
  ['8.8.8.8', false], ['1.1.1.1', false], ['93.184.216.34', false],
  // IPv6 registry.
  ['::', true], ['::1', true], ['0:0:0:0:0:0:0:1', true],
  ['100::1', true], ['100::ffff:ffff:ffff:ffff', true], ['100:0:0:1::1', true], ['100:0:0:2::1', true],
  ['2001::1', true], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true], ['2001:2::1', true], ['2001:10::1', true], ['2001:20::1', true], ['2001:1ff::1', true],
  ['2001:200::1', false],
  ['2001:db8::1', true], ['2001:db9::1', false],
  ['2002:7f00:1::', true], ['2002:808:808::1', true],
  ['2620:4f:8000::1', true],
  ['3fff::1', true], ['3fff:fff::1', true], ['3ffe::1', false],
  ['5f00::1', true],
  ['fc00::1', true], ['fd00:ec2::254', true], ['fe80::1', true], ['febf::1', true], ['fec0::1', true], ['ff02::1', true], ['ff0e::1', true],
  ['4000::1', true], ['::2', true],
  ['2606:4700::1111', false], ['2001:4860:4860::8888', false], ['2a00:1450:4003:80e::200e', false],
  // IPv4-compatible (deprecated): refused whole, public IPv4 inside or not.
  ['::127.0.0.1', true], ['::7f00:1', true], ['::10.0.0.1', true], ['::8.8.8.8', true],
  // IPv4-mapped: judged by the IPv4 address.
  ['::ffff:127.0.0.1', true], ['::ffff:7f00:1', true], ['::ffff:10.0.0.1', true], ['::ffff:192.0.2.2', true], ['::ffff:198.51.100.1', true], ['0:0:0:0:0:ffff:a9fe:a9fe', true],
  ['::ffff:8.8.8.8', false], ['::FFFF:808:808', false],
  // NAT64 well-known prefix: judged by the IPv4 address; the local-use prefix refused whole.
  ['64:ff9b::7f00:1', true], ['64:ff9b::127.0.0.1', true], ['64:ff9b::a00:1', true], ['64:ff9b::c000:201', true], ['64:ff9b::8.8.8.8', false], ['64:ff9b::808:808', false],
  ['64:ff9b:1::7f00:1', true], ['64:ff9b:1::808:808', true], ['64:ff9b:1:ffff::1', true], ['64:ff9b:2::1', true],
  // Not an address.
  ['localhost', true], ['no-es-una-ip', true], ['fe80::1%eth0', true], ['', true],
]

describe('nonPublicKind', () => {
  it.each(TABLE)('%s → refused: %s', (address, refused) => {
    expect(isNonPublicAddress(address)).toBe(refused)
    expect(nonPublicKind(address) === undefined).toBe(!refused)
  })

  it('says what kind of address each refused one is', () => {
    expect(nonPublicKind('192.0.2.2')).toBe('documentación')
    expect(nonPublicKind('::ffff:127.0.0.1')).toBe('bucle local, en forma IPv6')
    expect(nonPublicKind('64:ff9b::a00:1')).toBe('privada, en forma IPv6')
    expect(nonPublicKind('2002:7f00:1::')).toBe('6to4')
  })
})
