/**
 * What db/driver-internals.ts assumes of knex and node-postgres below their
 * documented APIs, checked one assumption at a time against the installed
 * packages and the database of either mode, and what db/driver.ts assumes of
 * MikroORM through its typed extension points. A failure names the package,
 * the version pinned and the assumption that no longer holds: read
 * docs/decisions.md "Dependency internals: one file" before upgrading past
 * a pin, and change db/driver-internals.ts (only) to match.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EntitySchema } from '@mikro-orm/core'
import { MikroORM, PostgreSqlPlatform, type Knex } from '@mikro-orm/postgresql'
import { ServiceConnection, ServiceDriver } from '../../db/driver.js'
import { ServicePlatform } from '../../db/service-platform.js'
import { acquireConnection, announceQuery, notBegun, poolCounts, queryKnownShape, releaseConnection, type AnnouncedQuery, type PooledConnection, type Shapes, type TypeParsers } from '../../db/driver-internals.js'
import { createTestDatabase, usingPostgres, type TestDatabase } from '../helpers/services.js'
import { queriesOf } from '../helpers/sql-capture.js'

const ROOT = resolve(import.meta.dirname, '../..')
const pinned = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies
const requireHere = createRequire(import.meta.url)
/** The version of `name` that `from` (a file) loads: its package.json, found above its entry point (not every package exports it). */
function versionFrom (from: string, name: string): string {
  for (let dir = dirname(createRequire(from).resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json')
    const pkg = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as { name?: string, version: string } : undefined
    if (pkg?.name === name) return pkg.version
  }
  throw new Error(`no package.json of ${name} above its entry point`)
}
const KNEX = requireHere.resolve('knex')
const PG = createRequire(KNEX).resolve('pg') // the node-postgres knex loads: the one the pool's connections are made by

/** The message a broken assumption fails with. */
const broken = (pkg: string, assumption: string): string =>
  `${pkg} ${pinned[pkg] ?? ''}: ${assumption} no longer holds; db/driver-internals.ts relies on it (docs/decisions.md "Dependency internals: one file")`

const Probe = new EntitySchema<{ id: number, name: string }>({
  name: 'ContractProbe',
  tableName: 'contract_probe',
  properties: { id: { type: 'number', primary: true }, name: { type: 'string' } },
})

let db: TestDatabase
let orm: MikroORM
let knex: Knex
const text: TypeParsers = { getTypeParser: () => (v: string) => v }

beforeAll(async () => {
  db = await createTestDatabase()
  await db.query('create table contract_probe (id int primary key, name text not null)')
  await db.query("insert into contract_probe values (1, 'uno')")
  const where = db.url !== undefined ? { clientUrl: db.url } : { host: db.embedded!.host, port: db.embedded!.port, dbName: db.embedded!.dbName, user: 'postgres', password: 'postgres' }
  // One pooled connection: what the pool lends next is known.
  orm = await MikroORM.init({ ...where, driver: ServiceDriver, entities: [Probe], pool: { min: 0, max: 1 }, allowGlobalContext: true, debug: false })
  knex = orm.em.getConnection().getKnex()
}, 120_000)
afterAll(async () => {
  await orm?.close(true)
  await db?.drop()
})

/** Leaves the pool's one connection inside an aborted transaction, where PostgreSQL refuses even BEGIN (25P02). */
async function poisonThePool (): Promise<void> {
  const conn = await acquireConnection(knex)
  await conn.query({ text: 'begin', values: [] })
  await conn.query({ text: 'select 1/0', values: [] }).catch(() => undefined)
  await releaseConnection(knex, conn)
}
async function healThePool (): Promise<void> {
  const conn = await acquireConnection(knex)
  await conn.query({ text: 'rollback', values: [] })
  await releaseConnection(knex, conn)
}

describe('versions: each package the internals rely on is pinned exactly and installed at its pin', () => {
  it.each(['knex', 'pg', 'pg-protocol', '@mikro-orm/core', '@mikro-orm/postgresql'])('%s', (pkg) => {
    expect(pinned[pkg], `package.json must pin ${pkg} exactly (db/driver-internals.ts was checked against one version)`).toMatch(/^\d+\.\d+\.\d+$/)
    expect(versionFrom(import.meta.filename, pkg), broken(pkg, 'the installed version is the pinned one')).toBe(pinned[pkg])
  })

  it('knex loads the pinned node-postgres, which loads the pinned pg-protocol', () => {
    expect(versionFrom(KNEX, 'pg'), broken('pg', 'the node-postgres knex loads is the pinned one')).toBe(pinned.pg)
    expect(versionFrom(PG, 'pg-protocol'), broken('pg-protocol', 'the protocol parser node-postgres loads is the pinned one')).toBe(pinned['pg-protocol'])
    expect(versionFrom(requireHere.resolve('@mikro-orm/knex'), 'knex'), broken('knex', 'the knex MikroORM loads is the pinned one')).toBe(pinned.knex)
  })
})

describe('knex: its client lends the pool\'s node-postgres connections', () => {
  it('client.acquireConnection() lends a node-postgres Client of the pool, client.pool counts it, releaseConnection() takes it back', async () => {
    const Client = (createRequire(KNEX)('pg') as { Client: new () => unknown }).Client
    const conn = await acquireConnection(knex)
    try {
      expect(conn instanceof Client, broken('knex', 'client.acquireConnection() resolves to a node-postgres Client')).toBe(true)
      expect(poolCounts(knex), broken('knex', 'client.pool is tarn\'s pool (numUsed, numFree, numPendingAcquires)')).toEqual({ used: 1, free: 0, pending: 0 })
      expect((await conn.query({ text: 'select $1::int as n', values: [7] })).rows, broken('pg', 'a lent connection answers the public query config')).toEqual([{ n: 7 }])
    } finally {
      await releaseConnection(knex, conn)
    }
    expect(poolCounts(knex), broken('knex', 'client.releaseConnection() gives the connection back to the pool')).toEqual({ used: 0, free: 1, pending: 0 })
  })

  it('on a transaction\'s client, acquireConnection() gives the transaction\'s own connection and releaseConnection() leaves it held', async () => {
    const trx = await knex.transaction()
    try {
      await trx.raw("set local application_name = 'contrato'")
      const conn = await acquireConnection(trx)
      const { rows } = await conn.query({ text: 'select current_setting($1) as name', values: ['application_name'] })
      await releaseConnection(trx, conn)
      expect(rows, broken('knex', 'a transaction\'s client.acquireConnection() is the transaction\'s connection')).toEqual([{ name: 'contrato' }])
      expect(poolCounts(knex)?.used, broken('knex', 'a transaction\'s client.releaseConnection() leaves the connection to the transaction')).toBe(1)
      expect(await trx.raw('select 1 as n').then((r: { rows: unknown[] }) => r.rows), broken('knex', 'the transaction still runs after its client released the connection')).toEqual([{ n: 1 }])
    } finally {
      await trx.rollback()
    }
    expect(poolCounts(knex)?.used).toBe(0)
  })

  it('client.emit("query", …) reaches the listeners of knex\'s query event, from the pool\'s client and from a transaction\'s', async () => {
    const seen: AnnouncedQuery[] = []
    const listen = (q: AnnouncedQuery): void => { seen.push(q) }
    knex.on('query', listen)
    const trx = await knex.transaction()
    try {
      announceQuery(knex, { sql: 'select $1', bindings: [1], name: 's_contrato' })
      announceQuery(trx, { sql: 'select $1', bindings: [2] })
    } finally {
      await trx.rollback()
      knex.off('query', listen)
    }
    expect(seen.filter((q) => q.sql === 'select $1'), broken('knex', 'client.emit("query") is what knex.on("query") listeners receive')).toEqual([
      { sql: 'select $1', bindings: [1], name: 's_contrato' },
      { sql: 'select $1', bindings: [2] },
    ])
  })

  it('a transaction whose BEGIN failed is handed back completed, its executionPromise rejecting with BEGIN\'s error', async () => {
    await poisonThePool()
    try {
      const trx = await knex.transaction().catch((err: unknown) => { throw new Error(broken('knex', 'knex.transaction() resolves even when BEGIN fails'), { cause: err }) })
      expect(trx.isCompleted(), broken('knex', 'a transaction whose BEGIN failed is completed')).toBe(true)
      const failed = notBegun(trx)
      expect(failed, broken('knex', 'a transaction whose BEGIN failed is completed')).toBeInstanceOf(Promise)
      const err = await failed!.catch((e: unknown) => e)
      expect((err as { code?: string }).code, broken('knex', 'executionPromise rejects with the error of BEGIN')).toBe('25P02')
    } finally {
      await healThePool()
    }
  })

  it('so the driver\'s begin() throws BEGIN\'s error instead of handing back a closed transaction', async () => {
    await poisonThePool()
    try {
      const err = await orm.em.getConnection().begin().then(() => undefined, (e: unknown) => e)
      expect((err as { code?: string } | undefined)?.code, broken('knex', 'a failed BEGIN is seen by the driver')).toBe('25P02')
    } finally {
      await healThePool()
    }
    const trx = await knex.transaction()
    expect(notBegun(trx), broken('knex', 'a transaction that began is not completed')).toBeUndefined()
    await trx.rollback()
  })
})

/**
 * A Submittable that runs one statement (named, or '' for unnamed) and
 * records what node-postgres hands it. node-postgres reads `name` and
 * `text` off the active query to fill parsedStatements, as it does off
 * db/driver-internals.ts's.
 */
class ProtocolProbe {
  writer: Record<string, string> = {}
  parsed: string | undefined
  readonly messages: Array<[string, unknown]> = []
  private done!: (err?: Error) => void
  readonly finished = new Promise<void>((resolve, reject) => { this.done = (err) => { if (err === undefined) resolve(); else reject(err) } })

  constructor (readonly name: string, readonly text: string, private readonly values: Array<string | null>) {}

  submit (c: Record<string, unknown> & { parsedStatements: Record<string, string>, parse: (x: object) => void, bind: (x: object) => void, describe: (x: object) => void, execute: (x: object) => void, sync: () => void }): null {
    for (const k of ['parse', 'bind', 'describe', 'execute', 'sync', 'sendCopyFail', 'stream', 'parsedStatements']) this.writer[k] = typeof c[k]
    this.parsed = c.parsedStatements[this.name]
    if (this.parsed === undefined) c.parse({ text: this.text, name: this.name, types: [] })
    c.bind({ portal: '', statement: this.name, values: this.values, binary: false })
    c.describe({ type: 'P', name: '' })
    c.execute({ portal: '' })
    c.sync()
    return null
  }

  handleRowDescription (msg: { fields: Array<{ name: string, dataTypeID: number, format: string }> }): void { this.messages.push(['rowDescription', msg.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID, format: f.format }))]) }
  handleDataRow (msg: { fields: Array<string | null> }): void { this.messages.push(['dataRow', [...msg.fields]]) }
  handleCommandComplete (msg: { text: string }): void { this.messages.push(['commandComplete', msg.text]) }
  handleEmptyQuery (): void {}
  handlePortalSuspended (): void {}
  handleCopyInResponse (): void {}
  handleCopyData (): void {}
  // node-postgres drops the active query on an ErrorResponse: no handleReadyForQuery follows, so the error ends it.
  handleError (err: Error): void { this.messages.push(['error', (err as { code?: string }).code]); this.done() }
  handleReadyForQuery (): void { this.messages.push(['readyForQuery', null]); this.done() }
}

// PostgreSQL only: embedded mode names nothing, so the Submittable never runs there (db/open.ts).
describe.runIf(usingPostgres)('node-postgres: a Submittable writes the protocol and is handed the backend\'s answers', () => {
  let conn: PooledConnection
  const submit = async (probe: ProtocolProbe): Promise<void> => {
    (conn as unknown as { query (s: ProtocolProbe): unknown }).query(probe)
    await probe.finished
  }
  beforeAll(async () => { conn = await acquireConnection(knex) })
  afterAll(async () => { await releaseConnection(knex, conn) })

  it('client.query(submittable) hands submit() the connection\'s protocol writer, and the answers come as handle* calls with pg-protocol\'s message shapes', async () => {
    const probe = new ProtocolProbe('', 'select $1::int as n, null::text as t', ['7'])
    await submit(probe)
    expect(probe.writer, broken('pg', 'a Submittable\'s submit(connection) gets parse, bind, describe, execute, sync, sendCopyFail, stream and parsedStatements')).toEqual({
      parse: 'function', bind: 'function', describe: 'function', execute: 'function', sync: 'function', sendCopyFail: 'function', stream: 'object', parsedStatements: 'object',
    })
    expect(probe.messages, broken('pg-protocol', 'RowDescription (fields: name, dataTypeID, format), DataRow (fields as text or null) and CommandComplete (text) reach handleRowDescription, handleDataRow, handleCommandComplete')).toEqual([
      ['rowDescription', [{ name: 'n', dataTypeID: 23, format: 'text' }, { name: 't', dataTypeID: 25, format: 'text' }]],
      ['dataRow', ['7', null]],
      ['commandComplete', 'SELECT 1'],
      ['readyForQuery', null],
    ])
  })

  it('parsedStatements[name] is the statement\'s text once PostgreSQL confirmed its Parse on that connection', async () => {
    const statement = 'select $1::int as n, null::text as t'
    const first = new ProtocolProbe('s_contrato_parse', statement, ['1'])
    await submit(first)
    const second = new ProtocolProbe('s_contrato_parse', statement, ['2'])
    await submit(second)
    expect(first.parsed, broken('pg', 'parsedStatements has no entry for a name not parsed yet')).toBeUndefined()
    expect(second.parsed, broken('pg', 'parsedStatements[name] is the active query\'s text once PostgreSQL parsed it under the active query\'s name')).toBe(statement)
    expect(second.messages.find(([m]) => m === 'dataRow'), broken('pg', 'a parsed statement binds and executes without a new Parse')).toEqual(['dataRow', ['2', null]])
  })

  it('an error reaches handleError (with PostgreSQL\'s SQLSTATE as code) and ends the query, and the connection serves the next query', async () => {
    const probe = new ProtocolProbe('', 'select 1/$1::int as n', ['0'])
    await submit(probe)
    expect((await conn.query({ text: 'select 1 as n', values: [] })).rows, broken('pg', 'the connection serves the next query after an error')).toEqual([{ n: 1 }])
    expect(probe.messages, broken('pg', 'an ErrorResponse reaches handleError with its SQLSTATE as code, and no handleReadyForQuery follows it')).toEqual([['error', '22012']])
  })

  it('a named statement run through the driver\'s Submittable: described once per connection, later executions read with the kept shape; an untyped parameter fails with 42P18', async () => {
    const shapes: Shapes = new Map()
    let described = 0
    const counting: PooledConnection = {
      query: (s: unknown) => {
        const q = s as { handleRowDescription (m: unknown): void }
        const describe = q.handleRowDescription.bind(q)
        q.handleRowDescription = (m) => { described++; describe(m) }
        return (conn as unknown as { query (x: unknown): Promise<never> }).query(q)
      },
    } as unknown as PooledConnection
    const config = (id: number): { name: string, text: string, values: unknown[], types: TypeParsers } => ({ name: 's_contrato_shape', text: 'select id, name from contract_probe where id = $1', values: [id], types: text })
    const runs = [await queryKnownShape(counting, config(1), shapes), await queryKnownShape(counting, config(2), shapes), await queryKnownShape(counting, config(1), shapes)]
    expect(runs.map((r) => [r.rows, r.rowCount]), broken('pg', 'Bind, Execute and Sync without Describe answer DataRows of the kept shape')).toEqual([[[{ id: '1', name: 'uno' }], 1], [[], 0], [[{ id: '1', name: 'uno' }], 1]])
    expect(described, broken('pg', 'a RowDescription comes only when Describe was sent')).toBe(1)
    const untyped = await queryKnownShape(conn, { name: 's_contrato_untyped', text: 'select $1 is null as x', values: ['a'], types: text }, shapes).catch((e: unknown) => e)
    expect((untyped as { code?: string }).code, broken('pg', 'an untyped parameter fails the named statement with 42P18')).toBe('42P18')
  })
})

describe('MikroORM: the driver\'s subclasses use its typed extension points only', () => {
  it('ServiceDriver, made by AbstractSqlDriver\'s constructor as PostgreSqlDriver is, connects through ServiceConnection', () => {
    expect(orm.em.getConnection(), broken('@mikro-orm/postgresql', 'a driver\'s connection is made from the class handed to AbstractSqlDriver\'s constructor')).toBeInstanceOf(ServiceConnection)
    expect(orm.em.getPlatform(), broken('@mikro-orm/postgresql', 'a driver\'s platform is the one handed to AbstractSqlDriver\'s constructor')).toBeInstanceOf(ServicePlatform)
    expect(orm.em.getPlatform()).toBeInstanceOf(PostgreSqlPlatform)
  })

  it('the ORM\'s own queries go through Connection.execute (so, as named statements)', async () => {
    const em = orm.em.fork()
    const sent = await queriesOf(em, async () => em.count(Probe, { name: 'uno' }))
    expect(await em.count(Probe, { name: 'uno' })).toBe(1)
    expect(sent.length, broken('@mikro-orm/postgresql', 'an entity query is sent through Connection.execute')).toBe(1)
    expect(sent[0]!.name, broken('@mikro-orm/postgresql', 'an entity query is sent through Connection.execute')).toMatch(/^s\d+_[0-9a-f]{24}$/)
  })
})
