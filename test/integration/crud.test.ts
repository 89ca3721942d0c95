/**
 * Every endpoint of every module, generated from modules.yaml (no module is
 * named here): create with all fields and with only the required ones, read,
 * partial update, list, soft delete; stored as one table per module with one
 * column per field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MESSAGES } from '../../core/errors.js'
import { loadRegistry } from '../../core/registry/load.js'
import { valueColumn } from '../../db/columns.js'
import type { Harness } from '../helpers/app.js'
import { refOrder, sampleBody, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

const registry = loadRegistry('modules.yaml')
let h: Harness, api: Api
const refs = new Map<string, string>()

beforeAll(async () => {
  ({ h, admin: api } = await startTestApp())
})
afterAll(async () => { await h.close() })

const ID = /^[A-Z0-9]+-\d{4}-\d{5,}$/
const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

describe.each(refOrder(registry).map((m) => [m.name, m] as const))('module %s', (_name, mod) => {
  const base = `/${mod.path}`
  let id: string
  let created: Record<string, any>

  it('POST creates a record with generated system fields (201)', async () => {
    const body = sampleBody(mod, refs)
    const res = await api.post(base, body)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body.success).toBe(true)
    created = res.body.data
    id = created._id
    refs.set(mod.name, id)
    const year = new Intl.DateTimeFormat('en', { timeZone: 'Europe/Madrid', year: 'numeric' }).format(new Date())
    expect(id).toMatch(ID)
    expect(id.startsWith(`${mod.prefix}-${year}-`)).toBe(true)
    expect(created._version).toBe(1)
    expect(created._created).toMatch(DATETIME)
    expect(created._modified).toBe(created._created)
    expect(created._created_by).toMatch(/^USR-/)
    expect(created._modified_by).toBe(created._created_by)
    expect(created._hash).toMatch(/^[0-9a-f]{64}$/)
    expect(created._deleted).toBeNull()
    for (const f of mod.fields) {
      if (f.type === 'password') { expect(created).not.toHaveProperty(f.name); continue }
      expect(created).toHaveProperty(f.name)
      if (f.type === 'datetime') expect(created[f.name]).toBe(body[f.name])
      else expect(created[f.name]).toEqual(body[f.name])
    }
    expect(res.headers.etag).toBe('"1"')
    // fields in declared order, between _id and the other system fields
    const declared = mod.fields.filter((f) => f.type !== 'password').map((f) => f.name)
    expect(Object.keys(created)).toEqual(['_id', ...declared, '_created', '_created_by', '_modified', '_modified_by', '_version', '_hash', '_deleted'])
  })

  it('POST with only the required fields applies the declared defaults and nulls', async () => {
    const res = await api.post(base, sampleBody(mod, refs, true))
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    for (const f of mod.fields) {
      if (f.type === 'password' || f.required) continue
      if (f.default === undefined) expect(res.body.data[f.name]).toBeNull()
      else if (f.default !== 'now') expect(res.body.data[f.name]).toEqual(f.default)
      else expect(res.body.data[f.name]).toMatch(f.type === 'date' ? /^\d{4}-\d{2}-\d{2}$/ : DATETIME)
    }
  })

  it('GET /{id} returns the record with its ETag', async () => {
    const res = await api.get(`${base}/${id}`)
    expect(res.status).toBe(200)
    // A user's read also says whether its login is locked (docs/user-guide.md "Accounts and sessions").
    const extra = mod.name === 'usuarios' ? { bloqueado: false, bloqueado_hasta: null } : {}
    expect(res.body).toEqual({ success: true, data: { ...created, ...extra } })
    expect(res.headers.etag).toBe('"1"')
  })

  it('PUT changes only the fields sent and bumps _version', async () => {
    // A plain text field if there is one, else a second enum value (no state moves involved).
    const text = mod.fields.find((x) => (x.type === 'string' || x.type === 'text') && x.enum === undefined && !x.unique && !x.encrypted && x.pattern === undefined)
    const choice = mod.fields.find((x) => x.enum !== undefined && x.enum.length > 1 && x.name !== mod.stateField)
    const f = (text ?? choice)!
    const value = text !== undefined ? 'Valor cambiado' : choice!.enum![1]
    const res = await api.put(`${base}/${id}`, { [f.name]: value })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const { _version, _modified, _hash, [f.name]: changed, ...rest } = res.body.data
    const { _version: v0, _modified: m0, _hash: h0, [f.name]: before, ...rest0 } = created
    expect(changed).toBe(value)
    expect(_version).toBe(2)
    expect(_hash).not.toBe(h0)
    expect(rest).toEqual(rest0)
    expect(res.headers.etag).toBe('"2"')
  })

  it('GET / lists it with total, limit and offset', async () => {
    const res = await api.get(`${base}?_id=${id}`)
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ total: 1, limit: 100, offset: 0 })
    expect(res.body.data.records[0]._id).toBe(id)
    const all = await api.get(base)
    expect(all.body.data.total).toBeGreaterThanOrEqual(2)
  })

  it('is stored in a table named after the module, one column per field', async () => {
    const cols = await h.db.query<{ column_name: string }>(
      'select column_name from information_schema.columns where table_name = $1', [mod.table])
    const names = cols.map((c) => c.column_name)
    for (const f of mod.fields) expect(names).toContain(valueColumn(f))
    for (const s of ['_id', '_created', '_created_by', '_modified', '_modified_by', '_version', '_hash', '_deleted']) expect(names).toContain(s)
    const rows = await h.db.query(`select "_version" from "${mod.table}" where "_id" = $1`, [id])
    expect(rows).toEqual([{ _version: 2 }])
  })

  it('DELETE soft-deletes: 200, then 404 everywhere, row kept', async () => {
    if (mod.users) return // deleting a user is covered in the auth tests
    const victim = (await api.post(base, sampleBody(mod, refs))).body.data._id as string
    const res = await api.del(`${base}/${victim}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { message: MESSAGES.REGISTRO_ELIMINADO } })
    expectError(await api.get(`${base}/${victim}`), 'REGISTRO_NO_ENCONTRADO')
    expectError(await api.put(`${base}/${victim}`, sampleBody(mod, refs)), 'REGISTRO_NO_ENCONTRADO')
    expectError(await api.del(`${base}/${victim}`), 'REGISTRO_NO_ENCONTRADO')
    expect((await api.get(`${base}?_id=${victim}`)).body.data.total).toBe(0)
    const rows = await h.db.query<{ _deleted: Date | null, _version: number }>(`select "_deleted", "_version" from "${mod.table}" where "_id" = $1`, [victim])
    expect(rows).toHaveLength(1)
    expect(rows[0]!._deleted).toBeInstanceOf(Date)
    expect(rows[0]!._version).toBe(2)
  })
})
