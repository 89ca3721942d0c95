/**
 * The hot path's budget (issue: "GET by id does one database round trip and
 * at most one Redis round trip"), counted — not timed — on a warm token:
 * queries seen by the database driver and commands sent to Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from '../helpers/app.js'
import { client, login } from '../helpers/http.js'
import { usingRedis } from '../helpers/services.js'

let h: Harness
let app: FastifyInstance

beforeAll(async () => {
  h = await createHarness()
  app = await h.app()
})
afterAll(async () => { await h.close() })

describe('GET /{module}/{id}', () => {
  it('costs one database query and at most one Redis round trip', async () => {
    const api = client(app, await login(app))
    const id = (await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Ruido' })).body.data._id as string
    expect((await api.get(`/sala092/${id}`)).status).toBe(200) // warms the session and user cache

    const queries: string[] = []
    const knex = app.orm.em.getConnection().getKnex()
    const onQuery = (q: { sql: string }): void => { queries.push(q.sql) }
    knex.on('query', onQuery)
    const commands: string[] = []
    const redis = usingRedis ? app.redis : undefined
    const original = redis?.sendCommand.bind(redis)
    if (redis !== undefined && original !== undefined) {
      redis.sendCommand = ((cmd: { name: string }) => { commands.push(cmd.name); return original(cmd as never) }) as typeof redis.sendCommand
    }
    try {
      const res = await api.get(`/sala092/${id}`)
      expect(res.status).toBe(200)
    } finally {
      knex.off('query', onQuery)
      if (redis !== undefined && original !== undefined) redis.sendCommand = original
    }
    expect(queries).toHaveLength(1)
    expect(queries[0]).toMatch(/^select .* from "sala092"/)
    if (usingRedis) expect(commands).toEqual(['mget'])
  })
})
