/**
 * The reads by id of one turn in one statement (db/row-batch.ts;
 * docs/performance.md "Reads by id of a turn in one statement"), through
 * the HTTP interface and the statements sent. The instance's admissions
 * are held until a number of them arrived and then answered together, as
 * Redis answers a turn's admissions in one reply (core/coalesce.ts), so
 * which GETs share a turn is decided by the test, not by timing:
 * - GETs by id of records that exist, one of them twice, and of one that
 *   does not, answered together: one statement reads them all, each GET
 *   answers its own record (the one asked twice in equal copies) or 404;
 * - a record deleted before the turn is 404 to a GET of that turn;
 * - a caller limited to own records (a scope condition) reads with a
 *   statement of its own, and still sees only its records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { buildApp } from '../../app.js'
import { createStores } from '../../stores/factory.js'
import { createHarness, type Harness } from '../helpers/app.js'
import { call, login, type Res } from '../helpers/http.js'
import { testRedis, usingRedis } from '../helpers/services.js'
import { queriesOf } from '../helpers/sql-capture.js'
import { TurnBarrier } from '../helpers/turn-barrier.js'
import { newUser } from '../helpers/users.js'

/**
 * Holds the admissions of the next n requests until all n are ready, then
 * answers them together. A request's admission is its rate-limit hit and its
 * session lookup (stores/admission.ts; with the stores wrapped, asked apart):
 * each is held until the 2n of them have their answers.
 */
class HeldAdmissions {
  readonly turn = new TurnBarrier()

  hold (requests: number): void { this.turn.hold(2 * requests) }

  /**
   * `store` with `method` held (a Proxy: every other method as it is). Not an
   * instance of its class: so the admission asks the two stores apart, as it
   * does in process, instead of one Redis script of the two.
   */
  wrap<T extends object> (store: T, method: string): T {
    return new Proxy(store, {
      getPrototypeOf: () => Object.prototype,
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver) as unknown
        if (prop !== method || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value
        return async (...args: unknown[]) => {
          const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
          await this.turn.arrive()
          return answer
        }
      },
    })
  }
}

const CALL = { tipo_incidencia: 'normal', descripcion: 'leída' }

let h: Harness
let app: FastifyInstance
let token: string
let admissions: HeldAdmissions
let redis: Redis | undefined
const ids: string[] = []

beforeAll(async () => {
  h = await createHarness()
  await (await h.app()).ready() // schema and first administrator
  redis = usingRedis ? testRedis() : undefined
  const stores = createStores(redis, h.redisPrefix)
  admissions = new HeldAdmissions()
  const held = { ...stores, rateLimits: admissions.wrap(stores.rateLimits, 'hit'), sessions: admissions.wrap(stores.sessions, 'lookup') }
  app = await buildApp({ config: h.config, logger: false, stores: held, ...(h.db.embedded !== undefined && { embedded: h.db.embedded }) })
  token = await login(app)
  for (let i = 0; i < 4; i++) {
    const res = await call(app, 'POST', '/sala092', { token, body: { ...CALL, descripcion: `leída ${i}` } })
    expect(res.status).toBe(201)
    ids.push(res.body.data._id as string)
  }
}, 120_000)
afterAll(async () => {
  await app?.close()
  redis?.disconnect()
  await h.close()
})

/** GETs of `paths` answered together as `who`; their answers, and the statements that read sala092. */
async function readTogether (paths: readonly string[], who = token): Promise<{ answers: Res[], reads: string[] }> {
  let answers: Res[] = []
  const released = admissions.turn.releases
  const sent = await queriesOf(app.orm.em, async () => {
    admissions.hold(paths.length)
    answers = await Promise.all(paths.map(async (p) => call(app, 'GET', p, { token: who })))
  })
  expect(admissions.turn.releases).toBe(released + 1)
  return { answers, reads: sent.map((q) => q.sql).filter((sql) => /from "sala092"/.test(sql)) }
}

describe('GETs by id of one turn', () => {
  it('are read by one statement, each answered its own record or 404', async () => {
    const missing = ids[0]!.replace(/\d+$/, '99999')
    const asked = [ids[0]!, ids[1]!, missing, ids[2]!, ids[1]!, ids[3]!]
    const { answers, reads } = await readTogether(asked.map((id) => `/sala092/${id}`))
    expect(answers.map((r) => r.status)).toEqual([200, 200, 404, 200, 200, 200])
    expect(answers.filter((r) => r.status === 200).map((r) => r.body.data._id)).toEqual([ids[0], ids[1], ids[2], ids[1], ids[3]])
    expect(answers[3]!.body.data.descripcion).toBe('leída 2')
    expect(answers[4]!.body.data).toEqual(answers[1]!.body.data)
    expect(reads).toHaveLength(1)
  })

  it('do not see a record deleted before them', async () => {
    expect((await call(app, 'DELETE', `/sala092/${ids[3]!}`, { token })).status).toBe(200)
    const { answers } = await readTogether([ids[2]!, ids[3]!].map((id) => `/sala092/${id}`))
    expect(answers.map((r) => r.status)).toEqual([200, 404])
  })

  it('of a caller limited to its own records are each read with its scope', async () => {
    // An agente reads denuncias it created only (modules.yaml: denuncias.ver:propios).
    const agente = await newUser(app, token, 'agente')
    const own = await call(app, 'POST', '/denuncias', { token: agente.token, body: { denunciante_nombre: 'Ana Pérez', tipo: 'robo', fecha_hechos: '2026-03-01 10:00:00', lugar_hechos: 'Calle Mayor 1', descripcion: 'Robo' } })
    expect(own.status, JSON.stringify(own.body)).toBe(201)
    const other = await call(app, 'POST', '/denuncias', { token, body: { denunciante_nombre: 'Luis Gil', tipo: 'robo', fecha_hechos: '2026-03-01 10:00:00', lugar_hechos: 'Calle Mayor 2', descripcion: 'Robo' } })
    expect(other.status).toBe(201)
    let answers: Res[] = []
    const released = admissions.turn.releases
    const sent = await queriesOf(app.orm.em, async () => {
      admissions.hold(2)
      answers = await Promise.all([own, other].map(async (r) => call(app, 'GET', `/denuncias/${r.body.data._id as string}`, { token: agente.token })))
    })
    expect(admissions.turn.releases).toBe(released + 1)
    expect(answers.map((r) => r.status)).toEqual([200, 404])
    expect(sent.filter((q) => /from "denuncias"/.test(q.sql))).toHaveLength(2)
  })
})
