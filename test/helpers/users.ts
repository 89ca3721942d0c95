/** Users made through the API, as an administrator makes them (docs/user-guide.md "Authentication and roles"). */
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { PASSWORD } from './app.js'
import { call, login } from './http.js'

let userCounter = 0

/**
 * Creates a user with `rol` through POST /usuarios as `adminToken`; `fields`
 * adds or overrides body fields (`password`, `personal_id`, `email`…); `ip`
 * is the address the request comes from (for tests that count addresses).
 * A username is never used twice in a run.
 */
export async function createUser (app: FastifyInstance, adminToken: string, rol: string, fields: Record<string, unknown> = {}, ip?: string): Promise<{ id: string, username: string }> {
  const username = `u${++userCounter}-${rol}-${process.pid}`.toLowerCase()
  const res = await call(app, 'POST', '/usuarios', { token: adminToken, body: { username, password: PASSWORD, nombre: `Usuario ${rol}`, rol, ...fields }, ...(ip !== undefined && { ip }) })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return { id: res.body.data._id as string, username }
}

/** Creates a user (as createUser) and logs it in on `app`. */
export async function newUser (app: FastifyInstance, adminToken: string, rol: string, fields: Record<string, unknown> = {}): Promise<{ id: string, username: string, token: string }> {
  const user = await createUser(app, adminToken, rol, fields)
  return { ...user, token: await login(app, user.username, (fields.password as string | undefined) ?? PASSWORD) }
}
