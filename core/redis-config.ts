/**
 * Where the shared state lives (docs/operator-guide.md "Configuration",
 * "High availability"): one Redis by REDIS_URL, or the primary a group of
 * Sentinels names (REDIS_SENTINELS, REDIS_SENTINEL_NAME), which the client
 * follows through a promotion. Neither: in-process stores.
 */
import { ConfigError } from './errors.js'
import { redactUrl } from './redact-url.js'

export interface SentinelAddress {
  readonly host: string
  readonly port: number
}

export type RedisTarget =
  | { readonly kind: 'url', readonly url: string }
  | {
    readonly kind: 'sentinel'
    readonly sentinels: readonly SentinelAddress[]
    /** The monitored group's name (`sentinel monitor <name> …`). */
    readonly name: string
    /** AUTH of the Sentinels themselves. */
    readonly sentinelPassword?: string
    /** AUTH of the primary and its replicas. */
    readonly password?: string
  }

type Env = Record<string, string | undefined>

const value = (env: Env, name: string): string | undefined => {
  const raw = (env[name] ?? '').trim()
  return raw === '' ? undefined : raw
}

const EXAMPLE = 'REDIS_SENTINELS=10.0.0.11:26379,10.0.0.12:26379,10.0.0.13:26379'

/** `host:port` or `[v6]:port`. */
function sentinelAddress (entry: string): SentinelAddress {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry)
  const port = Number(m?.[3])
  if (m === null || port < 1 || port > 65535) {
    throw new ConfigError(`REDIS_SENTINELS must be a comma-separated list of host:port (an IPv6 address in brackets: [2001:db8::1]:26379), such as ${EXAMPLE}; "${entry}" is not one`)
  }
  return { host: m[1] ?? m[2]!, port }
}

/** The shared state's location from the environment, or undefined for in-process stores. */
export function redisTarget (env: Env): RedisTarget | undefined {
  const url = value(env, 'REDIS_URL')
  const list = value(env, 'REDIS_SENTINELS')
  const name = value(env, 'REDIS_SENTINEL_NAME')
  const sentinelPassword = value(env, 'REDIS_SENTINEL_PASSWORD')
  const password = value(env, 'REDIS_PASSWORD')
  if (list === undefined) {
    const stray = [['REDIS_SENTINEL_NAME', name], ['REDIS_SENTINEL_PASSWORD', sentinelPassword]].filter(([, v]) => v !== undefined).map(([n]) => n!)
    if (stray.length > 0) throw new ConfigError(`${stray.join(' and ')} ${stray.length > 1 ? 'are' : 'is'} set but REDIS_SENTINELS is not: set REDIS_SENTINELS to the Sentinels' addresses (${EXAMPLE}), or unset ${stray.length > 1 ? 'them' : 'it'}`)
    if (password !== undefined) throw new ConfigError('REDIS_PASSWORD is for the Redis servers behind REDIS_SENTINELS; with REDIS_URL put the password in the URL (redis://:password@host:6379), or set REDIS_SENTINELS')
    return url === undefined ? undefined : { kind: 'url', url }
  }
  if (url !== undefined) throw new ConfigError(`REDIS_URL and REDIS_SENTINELS are both set: the service follows one Redis; unset REDIS_URL to follow the primary the Sentinels name (${redactUrl(url)} would be ignored), or unset REDIS_SENTINELS`)
  if (name === undefined) throw new ConfigError('REDIS_SENTINELS is set but REDIS_SENTINEL_NAME is not: set it to the group name the Sentinels monitor (the <name> of "sentinel monitor <name> <host> <port> <quorum>" in sentinel.conf, often mymaster)')
  const sentinels = list.split(',').map((e) => e.trim()).filter((e) => e !== '').map(sentinelAddress)
  return {
    kind: 'sentinel',
    sentinels: Object.freeze(sentinels),
    name,
    ...(sentinelPassword !== undefined && { sentinelPassword }),
    ...(password !== undefined && { password }),
  }
}

/** For logs and messages: no password. */
export function describeRedis (target: RedisTarget): string {
  return target.kind === 'url'
    ? `Redis at ${redactUrl(target.url)}`
    : `the Redis primary of "${target.name}" (Sentinels ${target.sentinels.map((s) => s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`).join(', ')})`
}
