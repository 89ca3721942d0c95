/**
 * Issue 8, scenario d (docs/operator-guide.md "Sessions and a Redis restore"): Redis comes back from a
 * stale snapshot. Tokens are issued and Redis saves a snapshot; then some
 * tokens are logged out and a user is deactivated through the API; Redis
 * dies without saving (SHUTDOWN NOSAVE) and is started again from the same
 * directory, so it loads the old dump.rdb in which those sessions are live
 * and that user is active. Every revoked token and every token of the
 * deactivated user must still get 401, on every instance and through nginx;
 * the other tokens keep working.
 *
 * docs/operator-guide.md "Ids and a Redis restore", the same fault for ids: records are created across the
 * instances, Redis saves, more are created (and some numbers are drawn by
 * creates that then fail: gaps), Redis comes back from the snapshot with
 * every counter behind. Creates across the instances must all succeed (no
 * 409), with no duplicate, every new id above every stored one, and no gap
 * filled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, login, startStack, type Stack } from './helpers/stack.js'
import { waitFor } from './helpers/processes.js'
import { PASSWORD } from '../helpers/app.js'
import { errorOf } from '../helpers/errors.js'


describe('Redis restored from a stale snapshot, three instances behind nginx', () => {
  let stack: Stack

  beforeAll(async () => { stack = await startStack() })
  afterAll(async () => { await stack?.close() })

  it('keeps every revoked token and every token of a deactivated user refused', async () => {
    const admin = await login(stack.url)
    const users: Record<string, string> = {}
    for (const name of ['ana', 'benito', 'carmen', 'diego']) {
      const res = await call(stack.url, 'POST', '/usuarios', { token: admin, body: { username: name, password: PASSWORD, nombre: name, rol: 'agente' } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      users[name] = res.body.data._id
    }
    const tokens = {
      anaLoggedOut: await login(stack.url, 'ana', PASSWORD),
      anaKept: await login(stack.url, 'ana', PASSWORD),
      benitoLoggedOut: await login(stack.url, 'benito', PASSWORD),
      carmenDeactivated1: await login(stack.url, 'carmen', PASSWORD),
      carmenDeactivated2: await login(stack.url, 'carmen', PASSWORD),
      diegoKept: await login(stack.url, 'diego', PASSWORD),
    }
    const bases = [...stack.instances.map((i) => i.url), stack.url]
    // Every token works everywhere (and is now cached in Redis).
    for (const base of bases) {
      for (const [name, token] of Object.entries(tokens)) expect((await call(base, 'GET', '/me', { token })).status, `${name} at ${base}`).toBe(200)
    }

    await stack.redis.save()
    const keysInSnapshot = await stack.redis.size()
    expect(keysInSnapshot).toBeGreaterThan(0)

    expect((await call(stack.url, 'POST', '/auth/logout', { token: tokens.anaLoggedOut })).status).toBe(200)
    expect((await call(stack.url, 'POST', '/auth/logout', { token: tokens.benitoLoggedOut })).status).toBe(200)
    expect((await call(stack.url, 'PUT', `/usuarios/${users.carmen}`, { token: admin, body: { activo: false } })).status).toBe(200)
    const refused = ['anaLoggedOut', 'benitoLoggedOut', 'carmenDeactivated1', 'carmenDeactivated2'] as const
    const kept = ['anaKept', 'diegoKept'] as const
    for (const base of bases) {
      for (const name of refused) expect((await call(base, 'GET', '/me', { token: tokens[name] })).status, `${name} at ${base} before the restore`).toBe(401)
    }

    await stack.redis.shutdown()
    await stack.redis.start()
    expect(await stack.redis.size(), 'Redis did not load the old snapshot').toBeGreaterThan(0)
    // The instances reconnect by themselves.
    for (const base of bases) {
      await waitFor(`${base} serving again`, async () => (await call(base, 'GET', '/me', { token: tokens.diegoKept })).status === 200, 60_000, 200)
    }

    const seen: string[] = []
    for (const base of bases) {
      for (const name of refused) {
        const res = await call(base, 'GET', '/me', { token: tokens[name] })
        seen.push(`${name}@${base.replace('http://127.0.0.1:', '')}=${res.status}`)
      }
      for (const name of kept) expect((await call(base, 'GET', '/me', { token: tokens[name] })).status, `${name} at ${base}`).toBe(200)
    }
    console.log(`[faults] d. stale Redis snapshot: ${seen.join(' ')}`)
    for (const base of bases) {
      for (const name of refused) {
        const res = await call(base, 'GET', '/me', { token: tokens[name] })
        expect({ token: name, at: base, status: res.status, body: res.body }).toEqual({ token: name, at: base, status: 401, body: errorOf('TOKEN_INVALIDO') })
      }
    }
    // A deactivated user cannot log in again either.
    expect((await call(stack.url, 'POST', '/auth/login', { body: { username: 'carmen', password: PASSWORD } })).status).toBe(401)
  })

  it('keeps ids unique and increasing when the counters come back behind', async () => {
    const admin = await login(stack.url)
    const year = Number(new Intl.DateTimeFormat('en', { timeZone: 'Europe/Madrid', year: 'numeric' }).format(new Date()))
    const key = `policia:seq:092-${year}`
    const bases = [...stack.instances.map((i) => i.url), stack.url]
    const create = async (n: number): Promise<string[]> => {
      const res = await Promise.all(Array.from({ length: n }, (_, i) => call(bases[i % bases.length]!, 'POST', '/sala092', { token: admin, body: { tipo_incidencia: 'normal', descripcion: `llamada ${i}` } })))
      expect(res.filter((r) => r.status !== 201).map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([])
      return res.map((r) => (r.body as { data: { _id: string } }).data._id)
    }
    const seq = (id: string): number => Number(id.split('-')[2])
    const redis = stack.redis.client()
    try {
      await create(20)
      await stack.redis.save()
      // Creates that drew a number and failed: the restored counter's next numbers are such gaps.
      const gaps: number[] = []
      for (let i = 0; i < 5; i++) {
        gaps.push(await redis.incr(key), await redis.incr(key))
        await create(12)
      }
      redis.disconnect()
      const before = (await stack.query<{ _id: string }>(`select "_id" from sala092 where "_id" like '092-${year}-%'`)).map((r) => seq(r._id))
      const top = Math.max(...before)

      await stack.redis.shutdown()
      await stack.redis.start()
      for (const base of bases) {
        await waitFor(`${base} serving again`, async () => (await call(base, 'GET', '/ready')).status === 200, 60_000, 200)
      }

      const fresh = (await create(60)).map(seq)
      console.log(`[faults] d. stale Redis counters: ${before.length} stored up to ${top}, gaps ${gaps.join(',')}; after the restore ${Math.min(...fresh)}..${Math.max(...fresh)}`)
      expect(new Set(fresh).size).toBe(60)
      // Above every number issued before the restore: the stored ones and the gaps.
      expect(fresh.filter((n) => n <= Math.max(top, ...gaps))).toEqual([])
      const all = await stack.query<{ n: string, distinct: string }>('select count(*) as n, count(distinct "_id") as distinct from sala092')
      expect(all[0]!.n).toBe(all[0]!.distinct)
    } finally { redis.disconnect() }
  })
})
