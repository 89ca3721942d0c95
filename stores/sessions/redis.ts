/** The session cache in Redis, shared by every instance: each change one Lua script (atomic), every key under the namespace. */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { defineScripts, luaScript, type ScriptCommands } from '../redis-scripts.js'
import { CacheChanges } from './cache-changes.js'
import type { CachedSession, SessionFill, SessionLookup, SessionStore, UserSnapshot } from './contract.js'

/*
 * The session cache and its freshness (docs/operator-guide.md "Sessions and a Redis restore"). The database numbers its
 * revocations (the revocation epoch, db/revocation-epoch.ts). Redis holds,
 * beside the cached values:
 *   cache:epoch  the epoch the cache has caught up with: every cached value
 *                reflects every revocation up to it;
 *   cache:gen    a random generation; every cached value carries the one it
 *                was written under, and a value of another counts as a miss;
 *   cache:ahead  revocations applied out of order (epoch N+2 before N+1).
 * After its commit, a revocation's Lua script applies it and raises
 * cache:epoch by one if it is the next (then past any in cache:ahead).
 * Redis restored from a snapshot or an append-only file that lost its
 * tail, or a replica promoted with lag, comes back with an older
 * cache:epoch. Every instance knows the database's epoch (its own
 * revocations, a check at start-up and every two seconds, every read on a
 * miss) and distrusts the whole cache after each (re)connection until a
 * read of the database has confirmed it; while Redis is behind, every
 * request is a miss answered by the database, and the first fill replaces
 * cache:gen (dropping every value at once) and sets cache:epoch to the
 * database's.
 */

/*
 * Every script that changes a cached value announces it on the channel
 * `<prefix>cache:changed` (its last ARGV): the keys it wrote, space
 * apart, or `*` when the generation changed. Instances that copy values
 * ahead of Redis (stores/admission.ts) drop those copies; Redis sends the
 * announcement before it answers the script, so before the change is
 * answered to anybody.
 */

/** Caches what the database said at epoch ARGV[1]; repairs a cache found behind it first. */
const FILL = `
local f = tonumber(ARGV[1])
local e = tonumber(redis.call('GET', KEYS[1]) or '-1')
local g = redis.call('GET', KEYS[2])
if e > f or (g and e == f and redis.call('ZCARD', KEYS[3]) > 0) then return 0 end
local changed = {}
if e < f or not g then
  g = ARGV[2]
  redis.call('SET', KEYS[2], g)
  redis.call('SET', KEYS[1], f)
  redis.call('DEL', KEYS[3])
  changed[1] = '*'
end
if ARGV[3] ~= '' then
  local cur = redis.call('GET', KEYS[4])
  if not cur or string.sub(cur, 1, #g + 1) ~= g .. '|' then
    redis.call('SET', KEYS[4], g .. '|' .. ARGV[3], 'PX', ARGV[4])
    changed[#changed + 1] = KEYS[4]
  end
end
if ARGV[5] ~= '' then
  redis.call('SET', KEYS[5], g .. '|' .. ARGV[5], 'PX', ARGV[6])
  changed[#changed + 1] = KEYS[5]
end
if #changed > 0 then redis.call('PUBLISH', ARGV[7], changed[1] == '*' and '*' or table.concat(changed, ' ')) end
return 1`

/** A session issued just now: active under the current generation (none yet: the first fill repairs). */
const PUT_SESSION = `
local g = redis.call('GET', KEYS[1])
if g then redis.call('SET', KEYS[2], g .. '|' .. ARGV[1], 'PX', ARGV[2]) end
return 0`

/**
 * Applies revocation ARGV[1] (committed in the database) to KEYS[4..]:
 * each becomes its value (ARGV[2], ARGV[4] …) under the current generation
 * with its expiry (ARGV[3], ARGV[5] …), or is deleted when its value is
 * empty; cache:epoch moves on when this is the next epoch. Epoch 0 moves
 * nothing (the first chunks of a long list, the last one carries the epoch).
 * The last ARGV is the channel the changed keys are announced on.
 */
const REVOKE = `
local n = tonumber(ARGV[1])
local g = redis.call('GET', KEYS[2])
local changed = {}
for i = 4, #KEYS do
  local v = ARGV[2 * (i - 3)]
  if v == '' then redis.call('DEL', KEYS[i])
  elseif g then redis.call('SET', KEYS[i], g .. '|' .. v, 'PX', ARGV[2 * (i - 3) + 1]) end
  changed[#changed + 1] = KEYS[i]
end
if #changed > 0 then redis.call('PUBLISH', ARGV[#ARGV], table.concat(changed, ' ')) end
local e = tonumber(redis.call('GET', KEYS[1]) or '-1')
if not g or e < 0 or n == 0 then return e end
if n == e + 1 then
  e = n
  while redis.call('ZREM', KEYS[3], tostring(e + 1)) == 1 do e = e + 1 end
  redis.call('SET', KEYS[1], e)
elseif n > e + 1 then
  redis.call('ZADD', KEYS[3], n, tostring(n))
end
return e`

/** Keys per REVOKE call when a user's sessions are revoked together. */
const REVOKE_CHUNK = 500

const SCRIPTS = {
  policiaFill: luaScript<[epochKey: string, genKey: string, aheadKey: string, sessionKey: string, userKey: string, epoch: number, gen: string, session: string, sessionTtlMs: number, user: string, userTtlMs: number, channel: string], number>(FILL, 5),
  policiaPutSession: luaScript<[genKey: string, sessionKey: string, value: string, ttlMs: number], number>(PUT_SESSION, 2),
  /** The number of keys, the keys (epoch, gen, ahead, then the targets), the epoch, then value and expiry per target, then the channel. */
  policiaRevoke: luaScript<[numberOfKeys: number, ...keysThenArgs: Array<string | number>], number>(REVOKE),
}

/** `<gen>|<rest>` → rest, when written under generation `gen`. */
function underGen (raw: string | null | undefined, gen: string): string | null {
  if (raw === null || raw === undefined || !raw.startsWith(`${gen}|`)) return null
  return raw.slice(gen.length + 1)
}

function parseSession (raw: string | null): CachedSession | null {
  if (raw === null) return null
  const bar = raw.indexOf('|')
  const state = raw.slice(0, bar)
  return (state === 'active' || state === 'revoked') && bar > 0 ? { state, userId: raw.slice(bar + 1) } : null
}

/** A snapshot cached by an older version (no personalId) is treated as a miss and read afresh. */
function parseUser (raw: string | null): UserSnapshot | null {
  if (raw === null) return null
  const user = JSON.parse(raw) as UserSnapshot
  return 'personalId' in user ? user : null
}

export class RedisSessionStore implements SessionStore {
  private readonly scripts: ScriptCommands<typeof SCRIPTS>
  /** The highest database epoch this instance knows. */
  private known = 0
  /** Counts (re)connections to Redis; `checked` is the one a database read has confirmed. */
  private connection = 1
  private checked = 0
  /** The announcements of this cache's changes (opened by the first listener, stores/admission.ts). */
  readonly changes: CacheChanges

  /** `client`: the one its commands go to (stores/admission.ts reads it together with the rate counters). */
  constructor (readonly client: Redis, private readonly prefix: string) {
    this.scripts = defineScripts(client, SCRIPTS)
    this.changes = new CacheChanges(client, this.changesChannel)
    // A restart, a failover: whatever answers now may hold an older state.
    client.on('ready', () => { this.connection++ })
  }

  private sessionKey (jti: string): string { return `${this.prefix}sess:${jti}` }
  private userKey (id: string): string { return `${this.prefix}user:${id}` }

  /** Where every change of a cached value is announced (the keys, or `*`: everything). */
  get changesChannel (): string { return `${this.prefix}cache:changed` }

  /** The jti of a session key, or the id of a user key, as announced on `changesChannel`. */
  keyOf (key: string): { session: string } | { user: string } | undefined {
    if (key.startsWith(`${this.prefix}sess:`)) return { session: key.slice(this.prefix.length + 5) }
    if (key.startsWith(`${this.prefix}user:`)) return { user: key.slice(this.prefix.length + 5) }
    return undefined
  }

  /** The highest revocation epoch this instance knows (a copy learnt under a lower one is stale). */
  get knownEpoch (): number { return this.known }
  private get stateKeys (): [string, string, string] {
    return [`${this.prefix}cache:epoch`, `${this.prefix}cache:gen`, `${this.prefix}cache:ahead`]
  }

  async lookup (jti: string, userId: string): Promise<SessionLookup> {
    return this.lookupWith(jti, userId, async (keys) => this.client.mget(...keys))
  }

  /** `lookup`, its keys read by `read` (with a request's rate counters, stores/admission.ts). */
  async lookupWith (jti: string, userId: string, read: (keys: string[]) => Promise<Array<string | null>>): Promise<SessionLookup> {
    const stamp = this.connection
    const [epochKey, genKey] = this.stateKeys
    const [session, user, epoch, gen] = await read([this.sessionKey(jti), this.userKey(userId), epochKey, genKey])
    // A reconnection while the read waited (its batch, core/coalesce.ts) answers from what may be an older Redis: stale too.
    const stale = this.checked !== stamp || this.connection !== stamp || epoch === null || epoch === undefined || gen === null || gen === undefined || Number(epoch) < this.known
    if (stale) return { session: null, user: null, stamp }
    return { session: parseSession(underGen(session, gen)), user: parseUser(underGen(user, gen)), stamp }
  }

  async fill (epoch: number, values: SessionFill, stamp: number): Promise<void> {
    this.noteEpoch(epoch)
    const { session, user } = values
    await this.scripts.policiaFill(
      ...this.stateKeys, this.sessionKey(session?.jti ?? '-'), this.userKey(user?.snapshot.id ?? '-'),
      epoch, randomUUID(),
      session === undefined ? '' : `${session.value.state}|${session.value.userId}`, Math.max(Math.ceil(session?.ttlMs ?? 1), 1),
      user === undefined ? '' : JSON.stringify(user.snapshot), Math.max(Math.ceil(user?.ttlMs ?? 1), 1), this.changesChannel)
    // The cache answered a script after a database read made since this
    // connection began: it is caught up (or was just dropped).
    if (stamp === this.connection) this.checked = stamp
  }

  async putSession (jti: string, userId: string, ttlMs: number): Promise<void> {
    await this.scripts.policiaPutSession(this.stateKeys[1], this.sessionKey(jti), `active|${userId}`, Math.max(Math.ceil(ttlMs), 1))
  }

  async revokeSession (jti: string, userId: string, ttlMs: number, epoch: number): Promise<void> {
    this.noteEpoch(epoch)
    await this.scripts.policiaRevoke(4, ...this.stateKeys, this.sessionKey(jti), epoch, `revoked|${userId}`, Math.max(Math.ceil(ttlMs), 1), this.changesChannel)
    await this.changes.delivered()
  }

  async dropUser (userId: string, epoch: number): Promise<void> {
    await this.revokeUser(userId, [], epoch)
  }

  async revokeUser (userId: string, sessions: ReadonlyArray<{ jti: string, ttlMs: number }>, epoch: number): Promise<void> {
    this.noteEpoch(epoch)
    const targets: Array<[string, string, number]> = sessions.map((s) => [this.sessionKey(s.jti), `revoked|${userId}`, Math.max(Math.ceil(s.ttlMs), 1)])
    targets.push([this.userKey(userId), '', 1])
    for (let i = 0; i < targets.length; i += REVOKE_CHUNK) {
      const chunk = targets.slice(i, i + REVOKE_CHUNK)
      const last = i + REVOKE_CHUNK >= targets.length
      await this.scripts.policiaRevoke(3 + chunk.length, ...this.stateKeys, ...chunk.map((t) => t[0]), last ? epoch : 0, ...chunk.flatMap((t) => [t[1], t[2]]), this.changesChannel)
    }
    await this.changes.delivered()
  }

  noteEpoch (epoch: number): void {
    if (epoch > this.known) this.known = epoch
  }
}
