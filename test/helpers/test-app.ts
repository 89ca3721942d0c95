/**
 * The start most test files share: a harness of their own (its database and
 * stores), one instance on it and the first administrator logged in.
 * More instances come from `h.app()`; the file closes `h` in afterAll.
 */
import type { FastifyInstance } from 'fastify'
import { createHarness, type Harness } from './app.js'
import { client, login, type Api } from './http.js'

export interface TestApp {
  h: Harness
  app: FastifyInstance
  /** The first administrator's token on `app`. */
  token: string
  /** `app` called with that token. */
  admin: Api
}

export async function startTestApp (overrides?: Parameters<Harness['app']>[0]): Promise<TestApp> {
  const h = await createHarness()
  const app = await h.app(overrides)
  const token = await login(app)
  return { h, app, token, admin: client(app, token) }
}
