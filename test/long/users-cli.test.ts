/**
 * The user-management command line (bin/users.ts, docs/administrator-guide.md "User management from the command line"): each command
 * against the test database (its main function, and as a child process),
 * checked through the service's HTTP interface: recovery of a lost
 * superadmin password then login, old tokens revoked, deactivation for
 * good, role changes, refusals with a non-zero status, --help.
 */
import { execFile, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { runUsers } from '../../bin/users.js'
import { startEmbeddedDatabase } from '../../db/embedded.js'
import { ADMIN, PASSWORD, testEnv, type Harness } from '../helpers/app.js'
import { call, client, login, type Api } from '../helpers/http.js'
import { expectError } from '../helpers/errors.js'
import { usingPostgres, usingRedis } from '../helpers/services.js'
import { startTestApp } from '../helpers/test-app.js'
import { newUser } from '../helpers/users.js'


let h: Harness, app: FastifyInstance, admin: Api
let dataDir: string

beforeAll(async () => {
  ({ h, app, admin } = await startTestApp())
  dataDir = mkdtempSync(join(tmpdir(), 'policia-cli-'))
})
afterAll(async () => {
  await h.close()
  rmSync(dataDir, { recursive: true, force: true })
})

interface Run { code: number, out: string, err: string }
/** Runs the command line's main function on the test database (and Redis, when the suite uses it). */
async function users (args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  let out = ''
  let err = ''
  const code = await runUsers(args, {
    env: { ...testEnv({ dataDir, redisPrefix: h.redisPrefix, ...(h.db.url !== undefined && { databaseUrl: h.db.url }) }), ...env },
    ...(h.db.embedded !== undefined && { embedded: h.db.embedded }),
    out: (t) => { out += t },
    err: (t) => { err += t },
  })
  // Without Redis the instance learns the change from the database's
  // revocation epoch, which it reads every 2 s; read it now.
  if (!usingRedis) await app.syncRevocationEpoch()
  return { code, out, err }
}
const printedPassword = (out: string): string => /shown only this once\): (\S+)/.exec(out)![1]!

describe('--help and usage', () => {
  it('the top level and every command answer --help with status 0', async () => {
    const top = await users(['--help'])
    expect(top.code).toBe(0)
    for (const c of ['list', 'create', 'deactivate', 'activate', 'set-role', 'reset-password', 'create-superadmin', 'desbloquear']) {
      expect(top.out).toContain(`  ${c}`)
      const r = await users([c, '--help'])
      expect(r.code, c).toBe(0)
      expect(r.out).toContain(`npm run users -- ${c}`)
    }
  })

  it('no command, an unknown one, or missing arguments: status 2 and the help on stderr', async () => {
    expect((await users([])).code).toBe(2)
    const unknown = await users(['borrar-todo'])
    expect(unknown).toMatchObject({ code: 2, out: '' })
    expect(unknown.err).toContain('unknown command "borrar-todo"')
    expect((await users(['deactivate'])).code).toBe(2)
    expect((await users(['set-role', 'admin'])).code).toBe(2)
    const create = await users(['create', '--username', 'x.y'])
    expect(create.code).toBe(2)
    expect(create.err).toContain('needs --nombre, --rol')
    expect((await users(['list', '--sin-esto'])).code).toBe(2)
  })

  it('runs as a child process too (npm run users --, as in the image)', async () => {
    const exec = promisify(execFile)
    const { stdout } = await exec('npx', ['tsx', 'bin/users.ts', '--help'], { cwd: join(import.meta.dirname, '../..') })
    expect(stdout).toContain('create-superadmin')
    const failed = await exec('npx', ['tsx', 'bin/users.ts', 'nada'], { cwd: join(import.meta.dirname, '../..') }).catch((e: { code: number, stderr: string }) => e)
    expect(failed).toMatchObject({ code: 2 })
    if (usingPostgres) {
      const env = { ...process.env, ...testEnv({ dataDir, redisPrefix: h.redisPrefix, databaseUrl: h.db.url! }) } as NodeJS.ProcessEnv
      const list = await exec('npx', ['tsx', 'bin/users.ts', 'list'], { cwd: join(import.meta.dirname, '../..'), env })
      expect(list.stdout).toMatch(new RegExp(`^${ADMIN.username}\\s+superadmin\\s+yes`, 'm'))
    }
  })
})

describe('recovery when every superadmin password is lost', () => {
  it('reset-password sets a generated password printed once, revokes the old sessions, and the new one logs in', async () => {
    const oldToken = await login(app)
    expect((await call(app, 'GET', '/me', { token: oldToken })).status).toBe(200)
    const r = await users(['reset-password', ADMIN.username])
    expect(r.code, r.err).toBe(0)
    expect(r.out).toContain(`Password of "${ADMIN.username}" changed; every session of theirs is revoked.`)
    const pw = printedPassword(r.out)
    expect(pw.length).toBeGreaterThanOrEqual(20)
    expectError(await call(app, 'GET', '/me', { token: oldToken }), 'TOKEN_INVALIDO')
    expectError(await call(app, 'POST', '/auth/login', { body: ADMIN }), 'CREDENCIALES_INVALIDAS')
    admin = client(app, await login(app, ADMIN.username, pw))
    // Written through the records layer: a version by SISTEMA, and the chain holds.
    const id = (await admin.get('/me')).body.data._id as string
    const hist = (await admin.get(`/usuarios/${id}/historial`)).body.data.versiones as Array<{ usuario: string, campos: string[] }>
    expect(hist.at(-1)!.usuario).toBe('SISTEMA')
    expect((await admin.get(`/usuarios/${id}/verificar`)).body.data.valido).toBe(true)
    // Back to the known password, given on the command line.
    expect((await users(['reset-password', ADMIN.username, '--password', ADMIN.password])).code).toBe(0)
    admin = client(app, await login(app))
  })

  it('create-superadmin makes a new superadmin who logs in and manages users', async () => {
    const r = await users(['create-superadmin', '--username', 'rescate.cli'])
    expect(r.code, r.err).toBe(0)
    expect(r.out).toMatch(/User "rescate.cli" created with role superadmin \(USR-\d{4}-\d{5}\)/)
    const token = await login(app, 'rescate.cli', printedPassword(r.out))
    expect((await call(app, 'GET', '/me', { token })).body.data).toMatchObject({ username: 'rescate.cli', rol: 'superadmin', nombre: 'Superadministrador' })
    expect((await client(app, token).get('/usuarios')).status).toBe(200)
  })
})

describe('the other commands', () => {
  it('deactivate revokes every session for good; activate lets the user log in again, old tokens stay revoked', async () => {
    const u = await newUser(app, await login(app), 'agente')
    const d = await users(['deactivate', u.username])
    expect(d.code, d.err).toBe(0)
    expectError(await call(app, 'GET', '/me', { token: u.token }), 'TOKEN_INVALIDO')
    expectError(await call(app, 'POST', '/auth/login', { body: { username: u.username, password: PASSWORD } }), 'CREDENCIALES_INVALIDAS')
    expect((await users(['activate', u.username])).code).toBe(0)
    expectError(await call(app, 'GET', '/me', { token: u.token }), 'TOKEN_INVALIDO')
    expect((await call(app, 'GET', '/me', { token: await login(app, u.username, PASSWORD) })).status).toBe(200)
  })

  it('without Redis the command line still revokes: instances learn it from the database (its revocation epoch)', async () => {
    const u = await newUser(app, await login(app), 'agente')
    expect((await call(app, 'GET', '/me', { token: u.token })).status).toBe(200) // cached
    expect((await users(['reset-password', u.username], { REDIS_URL: undefined })).code).toBe(0)
    await app.syncRevocationEpoch() // what every instance does every 2 s
    expectError(await call(app, 'GET', '/me', { token: u.token }), 'TOKEN_INVALIDO')
  })

  it('set-role applies from the next request; create makes a user with the given password', async () => {
    const u = await newUser(app, await login(app), 'agente')
    expect((await call(app, 'GET', '/me', { token: u.token })).body.data.rol).toBe('agente')
    expect((await users(['set-role', u.username, 'consulta'])).code).toBe(0)
    expect((await call(app, 'GET', '/me', { token: u.token })).body.data.rol).toBe('consulta')
    const c = await users(['create', '--username', 'nuevo.cli', '--nombre', 'Nuevo', '--rol', 'jefe', '--email', 'nuevo@example.org', '--password', 'una-clave-larga-789'])
    expect(c.code, c.err).toBe(0)
    expect(c.out).toMatch(/^User "nuevo.cli" created with role jefe/)
    expect(c.out).not.toContain('Generated password')
    const token = await login(app, 'nuevo.cli', 'una-clave-larga-789')
    expect((await call(app, 'GET', '/me', { token })).body.data).toMatchObject({ rol: 'jefe', email: 'nuevo@example.org' })
  })

  it('list shows every live user with role, state and open sessions', async () => {
    const u = await newUser(app, await login(app), 'oficial')
    await login(app, u.username, PASSWORD)
    const r = await users(['list'])
    expect(r.code, r.err).toBe(0)
    expect(r.out.split('\n')[0]).toMatch(/^username\s+role\s+active\s+sessions\s+id$/)
    expect(r.out).toMatch(new RegExp(`^${u.username.replace('.', '\\.')}\\s+oficial\\s+yes\\s+2\\s+${u.id}$`, 'm'))
  })

  it('refusals exit 1 with the reason and what to do, and change nothing', async () => {
    const u = await newUser(app, await login(app), 'agente')
    const cases: Array<[string[], RegExp]> = [
      [['reset-password', u.username, '--password', 'CHANGE_ME_AT_LEAST_10'], /the password is a placeholder from the documentation .*; choose another, or leave --password out/],
      [['reset-password', u.username, '--password', u.username.toUpperCase()], /the password equals the username; choose another/],
      [['reset-password', u.username, '--password', 'corta'], /the password is shorter than 10 characters; choose another/],
      [['set-role', u.username, 'jefazo'], /role "jefazo" does not exist; use one of: superadmin, administrador/],
      [['deactivate', 'nadie.cli'], /no user named "nadie.cli".*npm run users -- list/],
      [['create', '--username', u.username, '--nombre', 'X', '--rol', 'agente'], /exists already/],
      [['create', '--username', 'Mal Nombre', '--nombre', 'X', '--rol', 'agente'], /username "Mal Nombre" is not valid/],
    ]
    for (const [args, message] of cases) {
      const r = await users(args)
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.err).toMatch(message)
    }
    expect((await call(app, 'GET', '/me', { token: u.token })).body.data.rol).toBe('agente')
  })
})

describe('desbloquear', () => {
  const tryLogin = async (username: string, password: string, ip: string): Promise<number> =>
    (await app.inject({ method: 'POST', url: '/auth/login', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ username, password }) })).statusCode

  it('lifts the lock in the store the service uses (Redis); without it, exits 1 saying where the lock lives and how to lift it', async () => {
    const u = await newUser(app, (await login(app)), 'agente')
    for (let i = 0; i < 10; i++) expect(await tryLogin(u.username, `incorrecta-${i}-xxxx`, '10.3.0.1')).toBe(401)
    expect(await tryLogin(u.username, PASSWORD, '10.3.0.1')).toBe(429)
    const missing = await users(['desbloquear', 'nadie.asi'])
    expect(missing.code).toBe(1)
    expect(missing.err).toContain('no user named "nadie.asi"')
    const r = await users(['desbloquear', u.username])
    if (usingRedis) {
      expect(r, r.err).toMatchObject({ code: 0, err: '' })
      expect(r.out).toContain(`User "${u.username}": login lock-out lifted on every address and device`)
      expect(await tryLogin(u.username, PASSWORD, '10.3.0.1')).toBe(200)
    } else {
      expect(r.code).toBe(1)
      expect(r.err).toContain('without REDIS_URL or REDIS_SENTINELS the login lock-out lives in the running service\'s memory')
      expect(r.err).toContain('Desbloquear')
      expect(await tryLogin(u.username, PASSWORD, '10.3.0.1')).toBe(429)
    }
    // Redis configured but not answering: refused, saying so.
    const down = await users(['desbloquear', u.username], { REDIS_URL: 'redis://127.0.0.1:1' })
    expect(down.code).toBe(1)
    expect(down.err).toContain('Redis at redis://127.0.0.1:1 does not answer, and the login lock-out lives there')
  })
})

describe('the embedded database serves one process', () => {
  it('a second opening of the same folder is refused, naming the process that holds it; a dead holder is taken over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'policia-lock-'))
    try {
      const first = await startEmbeddedDatabase(join(dir, 'pgdata'))
      await expect(startEmbeddedDatabase(join(dir, 'pgdata'))).rejects.toThrow(new RegExp(`in use by process ${process.pid} .*Stop that process first`))
      await first.stop()
      writeFileSync(join(dir, 'pgdata', 'policia.pid'), String(spawnSync('true').pid)) // a holder that died
      const again = await startEmbeddedDatabase(join(dir, 'pgdata'))
      await again.stop()
    } finally { rmSync(dir, { recursive: true, force: true }) }
  })

  it('the command line on a data folder held by a running service exits 1 with what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'policia-lock-'))
    try {
      const held = await startEmbeddedDatabase(join(dir, 'pgdata'))
      let err = ''
      const code = await runUsers(['list'], { env: { ...testEnv({ dataDir: dir, redisPrefix: h.redisPrefix }), DATABASE_URL: undefined, REDIS_URL: undefined }, err: (t) => { err += t } })
      await held.stop()
      expect(code).toBe(1)
      expect(err).toContain('is in use by process')
    } finally { rmSync(dir, { recursive: true, force: true }) }
  })
})
