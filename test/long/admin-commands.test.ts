/**
 * The admin commands (docs/operator-guide.md "Admin commands"), run as child processes the way an
 * operator runs them: each answers --help (integrity-key's without
 * printing or even reading a key), ends non-zero with the fix in the
 * message on failure, and `check` refuses what the start refuses: the
 * environment, and with DATABASE_URL a schema change that would lose data
 * (the same refusal buildApp raises). `migrate` syncs and exits; `checkpoint`
 * publishes one.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../core/config.js'
import { TEST_KEY } from '../helpers/app.js'
import { createTestDatabase, usingPostgres } from '../helpers/services.js'

const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'policia-admin-')); dirs.push(d); return d }
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

const SECRETS = { JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789', ENCRYPTION_KEY: TEST_KEY }

interface Run { code: number | null, out: string, err: string }
function run (command: string, args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bin/${command}.ts`, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', METRICS_PORT: '0', TZ: 'Europe/Madrid', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => { out += String(d) })
    child.stderr.on('data', (d: Buffer) => { err += String(d) })
    child.once('error', reject)
    child.once('close', (code) => { resolvePromise({ code, out, err }) })
  })
}

describe('--help', () => {
  it.each(['server', 'check', 'migrate', 'rotate-keys', 'integrity-key', 'checkpoint', 'diagrams', 'import', 'verificar-documento'])('%s --help explains itself and its exit status, exit 0, touching nothing', async (command) => {
    const dataDir = tmp()
    // Even with a database URL that points nowhere and no secrets: --help reads neither.
    const r = await run(command, ['--help'], { DATA_DIR: dataDir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    expect(r.out).toMatch(/^npm (start|run [a-z-]+)/)
    expect(r.out).toMatch(/Exit status/)
    expect(readdirSync(dataDir)).toEqual([]) // no secrets.json, no pgdata
  })

  it('integrity-key --help prints no key', async () => {
    const r = await run('integrity-key', ['--help'], { DATA_DIR: tmp(), ...SECRETS })
    expect(r.out).not.toMatch(/[A-Za-z0-9+/]{42,}={0,2}/)
    expect(r.out).not.toContain(TEST_KEY)
  })
})

describe('failures end non-zero with the fix', () => {
  it('an unknown option is refused', async () => {
    const r = await run('rotate-keys', ['--lot', '5'], { DATA_DIR: tmp(), ...SECRETS })
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/--lot/)
  })

  it('integrity-key with an ENCRYPTION_KEY that is not 32 bytes says how to make one', async () => {
    const r = await run('integrity-key', [], { DATA_DIR: tmp(), JWT_SECRET: SECRETS.JWT_SECRET, ENCRYPTION_KEY: 'c2hvcnQ=' })
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/^ENCRYPTION_KEY must be 32 bytes encoded in base64 \(got 5 bytes\); make one with: node -e/)
  })

  it('migrate without DATABASE_URL says what it needs', async () => {
    const r = await run('migrate', [], { DATA_DIR: tmp(), ...SECRETS })
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/^npm run migrate needs DATABASE_URL/)
  })
})

describe('on the embedded database (DATA_DIR/pgdata)', () => {
  it('check refuses a rename with a command that reaches it; migrate --apply runs it (refused while the service holds the database); check then accepts', { timeout: 240_000 }, async () => {
    const dataDir = tmp()
    const env = { DATA_DIR: dataDir, ...SECRETS, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin-password-123' }
    const renamed = join(tmp(), 'modules.yaml')
    // Indexed under its new name (modelo has no index of its own): the next start builds its indexes.
    writeFileSync(renamed, readFileSync('modules.yaml', 'utf8').replace('      modelo: { type: string,', '      modelo_vehiculo: { type: string, indexed: true,'))
    const statement = 'ALTER TABLE "vehiculos" RENAME COLUMN "modelo" TO "modelo_vehiculo";'
    const app = await buildApp({ config: loadConfig({ ...env, METRICS_PORT: '0' }), logger: false })
    try {
      // While the service holds the embedded database, the commands say to stop it first.
      const held = await run('migrate', ['--apply', statement], env)
      expect(held.code).toBe(1)
      expect(held.err).toMatch(new RegExp(`in use by process ${process.pid} .*Stop that process first \\(Ctrl-C on npm start`))
      const heldCheck = await run('check', [renamed], env)
      expect(heldCheck.code).toBe(1)
      expect(heldCheck.err).toMatch(/in use by process \d+ .*Ctrl-C on npm start/)
    } finally {
      await app.close()
    }
    const refused = await run('check', [renamed], env)
    expect(refused.code).toBe(1)
    expect(refused.err).toContain('vehiculos: column "modelo" has no field any more and "modelo_vehiculo" is new')
    expect(refused.err).toContain(`npm run migrate -- --apply '${statement}'`)
    expect(refused.err).toMatch(/[Ss]top the service first \(Ctrl-C on npm start/)
    expect(refused.err).not.toMatch(/psql/)

    const bad = await run('migrate', ['--apply', statement, '--apply', 'ALTER TABLE "vehiculos" RENAME COLUMN "nada" TO "algo";'], env)
    expect(bad.code).toBe(1)
    expect(bad.err).toMatch(/^statement 2 of 2 failed: .*"nada" does not exist\n {2}ALTER TABLE "vehiculos" RENAME COLUMN "nada" TO "algo";\nNothing was applied/)
    const applied = await run('migrate', ['--apply', statement], { ...env, MODULES_FILE: renamed })
    expect(applied.code, applied.err).toBe(0)
    expect(applied.out).toMatch(/^Applying 1 statement\(s\) to the embedded database in one transaction…\n {2}\[1\/1\] ALTER TABLE "vehiculos" RENAME COLUMN "modelo" TO "modelo_vehiculo"; \(\d+ ms\)\nApplied and committed\.\nThe next start \(or npm run migrate\) applies \d+ additive statement\(s\)\.\n$/)
    const accepted = await run('check', [renamed], env)
    expect(accepted.code, accepted.err).toBe(0)
    expect(accepted.out).toMatch(/database schema: OK — the start will apply \d+ additive statement\(s\):\n/)
    expect(accepted.out).toContain('create index "vehiculos_modelo_vehiculo_live_idx"')
  })
})

describe('npm run check refuses what the start refuses', () => {
  it('says what it checked when all is well (modules.yaml, environment, superadmin role, checkpoint directory)', async () => {
    const dataDir = tmp()
    const r = await run('check', [], { DATA_DIR: dataDir, ...SECRETS, CORS_ORIGINS: 'https://intranet.policia.example' })
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    expect(r.out).toMatch(/modules\.yaml: OK — \d+ modules, \d+ fields, \d+ roles/)
    expect(r.out).toMatch(/first superadmin role: superadmin/)
    expect(r.out).toMatch(/environment: OK — development; database embedded .*CORS https:\/\/intranet\.policia\.example; metrics off/)
    expect(r.out).toContain(`checkpoint directory: ${join(dataDir, 'puntos-control')} (writable)`)
    expect(r.out).toMatch(/database: not checked \(no DATABASE_URL/)
    expect(r.out).toMatch(/OK: the start would accept this\.\n$/)
  })

  it.each([
    ['a bad CORS origin', { CORS_ORIGINS: 'https://intranet.example/' }, /^CORS_ORIGINS must be .*did you mean https:\/\/intranet\.example\?/],
    ['production without DATABASE_URL', { NODE_ENV: 'production' }, /^NODE_ENV=production needs DATABASE_URL/],
    ['REDIS_URL with generated secrets', { REDIS_URL: 'redis://127.0.0.1:1', JWT_SECRET: '', ENCRYPTION_KEY: '' }, /^REDIS_URL is set, so JWT_SECRET and ENCRYPTION_KEY must be set too/],
    ['a bad TRUST_PROXY', { TRUST_PROXY: 'yes' }, /^TRUST_PROXY must be/],
    ['an ADMIN_PASSWORD the users module refuses', { ADMIN_USERNAME: 'jefa', ADMIN_PASSWORD: 'corta' }, /^ADMIN_PASSWORD is shorter than the 10 characters/],
  ])('%s: exit 1 with the message the start gives', async (_name, env, message) => {
    const r = await run('check', [], { DATA_DIR: tmp(), ...SECRETS, ...env })
    expect(r.code).toBe(1)
    expect(r.err).toMatch(message)
  })

  it('names the filters and searches no index serves, per module (docs/administrator-guide.md "Indexes")', async () => {
    const file = join(tmp(), 'modules.yaml')
    const original = readFileSync('modules.yaml', 'utf8')
    // vehiculos.km_actuales loses its index; modelo gains both of its own.
    writeFileSync(file, original.replace('km_actuales: { type: integer, min: 0, indexed: true,', 'km_actuales: { type: integer, min: 0,')
      .replace('      modelo: { type: string, label: Modelo }\n      tipo: { type: string, required: true, enum: [patrulla', '      modelo: { type: string, indexed: true, contains_index: true }\n      tipo: { type: string, required: true, enum: [patrulla'))
    const before = await run('check', ['--sin-entorno'])
    const after = await run('check', [file, '--sin-entorno'])
    expect([before.code, after.code], before.err + after.err).toEqual([0, 0])
    const line = (out: string, mod: string): string => out.split('\n').find((l) => l.startsWith(`  ${mod} `)) ?? ''
    expect(before.out).toContain('filters and searches without an index')
    expect(line(before.out, 'vehiculos')).toBe('  vehiculos      filters marca, modelo; contiene marca, modelo, bastidor')
    expect(line(after.out, 'vehiculos')).toBe('  vehiculos      filters marca, km_actuales; contiene marca, bastidor')
    expect(line(before.out, 'turnos')).toBe('  turnos         filters hora_inicio, hora_fin')
    expect(line(before.out, 'every module')).toBe('  every module   filters _version')
  })

  it('a modules.yaml without a superadmin role is refused (the start could not create the first one)', async () => {
    const file = join(tmp(), 'modules.yaml')
    const original = readFileSync('modules.yaml', 'utf8')
    writeFileSync(file, original.replace("permissions: ['*.*']", "permissions: ['denuncias.*']"))
    expect(readFileSync(file, 'utf8')).not.toBe(original)
    const r = await run('check', [file, '--sin-entorno'])
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/no role in usuarios\.rol holds "\*\.\*"/)
  })

  // `migrate` and the database checks of `check` take a DATABASE_URL: they
  // exist only against PostgreSQL (without one, `migrate` says what it needs, above).
  if (usingPostgres) describe('with DATABASE_URL', () => {
    it('migrate syncs a fresh database and exits; check then finds it in line; a change that would lose data is refused by check exactly as by the start', { timeout: 180_000 }, async () => {
      const db = await createTestDatabase()
      try {
        const env = { DATA_DIR: tmp(), ...SECRETS, DATABASE_URL: db.url }
        const before = await run('check', [], env)
        expect(before.code, before.err).toBe(0)
        expect(before.out).toMatch(/database schema: OK — the start will apply \d+ additive statement\(s\):\n  create table/)
        expect(before.out).toMatch(/system keys: none yet/)
        expect(await db.query("select 1 from information_schema.tables where table_name = 'sys_claves'")).toEqual([]) // check wrote nothing

        // An admin command on the database before its schema: what to do, not the SQL error.
        const early = await run('checkpoint', [], { ...env, CHECKPOINT_DIR: tmp() })
        expect(early.code).toBe(1)
        expect(early.err).toBe('the database has no "sys_claves" table yet: its schema was never created. Run npm run migrate (or start the service once), then run the command again\n')

        const first = await run('migrate', [], env)
        expect(first.code, first.err).toBe(0)
        expect(first.out).toMatch(/^Comparing the database schema with .*modules\.yaml…\n  create table/)
        expect(first.out).toMatch(/\d+ statements applied\.\n(  blind indexes of .*\n)+Blind indexes rebuilt with one key per field\.\n$/)
        const second = await run('migrate', [], env)
        expect(second.out).toMatch(/The schema was already in line; nothing to apply\.\nBlind indexes already use one key per field\.\n$/)

        const checkpointDir = tmp()
        const checkpoint = await run('checkpoint', [], { ...env, CHECKPOINT_DIR: checkpointDir })
        expect(checkpoint.code, checkpoint.err).toBe(0)
        expect(checkpoint.err).toMatch(/^Checkpoint \d+ published in .*punto-[^/\n]+\.json\.\n\d+ entries sealed\.\n$/)
        expect(checkpoint.err).toContain(checkpointDir)
        expect(JSON.parse(checkpoint.out)).toMatchObject({ formato: 2, cadena: expect.stringMatching(/^[0-9a-f]{32}$/), seq: expect.any(Number), firma: expect.any(String) })

        const inLine = await run('check', [], env)
        expect(inLine.code, inLine.err).toBe(0)
        expect(inLine.out).toMatch(/database schema: OK — matches modules\.yaml/)

        const changed = join(tmp(), 'modules.yaml')
        const original = readFileSync('modules.yaml', 'utf8')
        writeFileSync(changed, original.replace('      modelo: { type: string,', '      modelo: { type: boolean,'))
        expect(readFileSync(changed, 'utf8')).not.toBe(original)
        const refused = await run('check', [changed], env)
        expect(refused.code).toBe(1)
        expect(refused.err).toMatch(/no longer matches the database in a way that would lose or rewrite data; refusing to start\.\nThese statements would be needed:\n( {2}.*\n)* {2}alter table "[^"]+" alter column "modelo" type boolean/)
        const start = buildApp({ config: loadConfig({ ...env, MODULES_FILE: changed, METRICS_PORT: '0' }), logger: false })
        await expect(start).rejects.toThrow(refused.err.split('\n')[0]!.replace(changed, resolve(changed)))

        // A rename: refused by check with the statement, applied by migrate --apply, then in line.
        writeFileSync(changed, original.replace('      modelo: { type: string,', '      modelo_vehiculo: { type: string,'))
        const rename = await run('check', [changed], env)
        expect(rename.code).toBe(1)
        expect(rename.err).toContain(`npm run migrate -- --apply 'ALTER TABLE "vehiculos" RENAME COLUMN "modelo" TO "modelo_vehiculo";'`)
        expect(rename.err).toContain('psql "$DATABASE_URL"')
        const applied = await run('migrate', ['--apply', 'ALTER TABLE "vehiculos" RENAME COLUMN "modelo" TO "modelo_vehiculo";'], { ...env, MODULES_FILE: changed })
        expect(applied.code, applied.err).toBe(0)
        expect(applied.out).toMatch(/^Applying 1 statement\(s\) to the database in one transaction…\n/)
        expect((await run('migrate', [], { ...env, MODULES_FILE: changed })).code).toBe(0)
        const renamedCheck = await run('check', [changed], env)
        expect(renamedCheck.code, renamedCheck.err).toBe(0)
        expect(renamedCheck.out).toMatch(/database schema: OK — matches modules\.yaml/)
      } finally {
        await db.drop()
      }
    })
  })
})
