/** Which webhook targets are refused (records/subscriptions/target-address.ts; docs/operator-guide.md "Webhooks"). */
import { describe, expect, it } from 'vitest'
import { isPrivateAddress } from '../../records/subscriptions/target-address.js'

describe('isPrivateAddress', () => {
  it('refuses loopback, private, link-local, metadata and non-routable addresses, also IPv4-mapped', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1',
      '100.100.100.200', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'no-es-una-ip']) {
      expect(isPrivateAddress(a), a).toBe(true)
    }
  })

  it('lets public addresses through', () => {
    for (const a of ['8.8.8.8', '172.32.0.1', '192.0.2.10', '93.184.216.34', '2001:4860:4860::8888', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(a), a).toBe(false)
    }
  })
})
