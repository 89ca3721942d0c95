/**
 * Operations: logs carry request ids and never a secret or a decrypted value;
 * the real server shuts down gracefully on SIGTERM (in-flight requests
 * finish, the process exits 0).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { request } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../core/config.js'

import { createHarness, ADMIN, TEST_KEY, type Harness } from '../helpers/app.js'
import { client, login } from '../helpers/http.js'
import { usingRedis } from '../helpers/services.js'

describe('logs', () => {
  let h: Harness
  beforeAll(async () => { h = await createHarness() })
  afterAll(async () => { await h.close() })

  it('have request ids and contain no password, token or decrypted value', async () => {
    const lines: string[] = []
    const stream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
    const app = await buildApp({
      config: h.config,
      logger: { level: 'debug', stream, redact: { paths: ['req.headers.authorization', '*.password', '*.token'], censor: '[oculto]' } },
      ...(h.db.embedded !== undefined && { embedded: h.db.embedded }),
    })
    try {
      const token = await login(app)
      const api = client(app, token)
      const per = await api.post('/personal', { tip: 'T-LOG-1', nif: '99887766P', nombre: 'Eva', apellidos: 'Ruiz', escala: 'oficial', contacto_telefono: '611223344' })
      expect(per.status).toBe(201)
      await api.get(`/personal/${per.body.data._id as string}`)
      await api.post('/auth/login', { username: ADMIN.username, password: 'clave-equivocada-999' })
      await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-abc-123' } })
    } finally {
      await app.close()
    }
    const all = lines.join('')
    expect(lines.length).toBeGreaterThan(5)
    expect(all).toContain('"reqId":"trace-abc-123"')
    for (const secret of [ADMIN.password, 'clave-equivocada-999', '99887766P', '611223344', TEST_KEY]) {
      expect(all).not.toContain(secret)
    }
    expect(all).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/) // no JWT
  })
})

describe('graceful shutdown', () => {
  it('finishes in-flight requests on SIGTERM and exits 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'policia-shutdown-'))
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'silent',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
      ENCRYPTION_KEY: TEST_KEY,
      REDIS_PREFIX: `test:${process.env.TEST_RUN_ID ?? 'adhoc'}:shutdown:`,
    } as Record<string, string>
    // The child uses the embedded database in its own DATA_DIR; Redis when the suite has it.
    delete env.DATABASE_URL
    if (!usingRedis) delete env.REDIS_URL
    let output = ''
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ''
        const timer = setTimeout(() => { reject(new Error(`server did not start: ${out}`)) }, 60_000)
        child.stdout.on('data', (d: Buffer) => {
          out += String(d)
          const m = /listening on (http:\/\/\S+)/.exec(out)
          if (m !== null) { clearTimeout(timer); resolve(m[1]!) }
        })
        child.stderr.on('data', (d: Buffer) => { out += String(d) })
        child.on('exit', (code) => { reject(new Error(`server exited with ${String(code)}: ${out}`)) })
        child.on('close', () => { output = out })
      })
      const login = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
      const token = ((await login.json()) as { data: { token: string } }).data.token
      // A request whose headers reached the server while its body is still
      // arriving is unambiguously in flight when SIGTERM lands.
      const body = JSON.stringify({ tipo_incidencia: 'urgente', descripcion: 'Llamada en curso durante el apagado' })
      const { port } = new URL(url)
      const inflight = new Promise<{ status: number, body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: Number(port), method: 'POST', path: '/sala092', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` } }, (res) => {
          let text = ''
          res.on('data', (d: Buffer) => { text += String(d) })
          res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: text }) })
        })
        req.on('error', reject)
        req.write(body.slice(0, 10))
        setTimeout(() => {
          child.kill('SIGTERM')
          setTimeout(() => { req.end(body.slice(10)) }, 300)
        }, 300)
      })
      const exited = new Promise<number | null>((resolve) => { child.on('exit', (code) => { resolve(code) }) })
      const res = await inflight
      expect(res.status, res.body).toBe(201)
      expect(JSON.parse(res.body).data._id).toMatch(/^092-\d{4}-00001$/)
      expect(await exited, output).toBe(0)
      await expect(fetch(`${url}/health`)).rejects.toThrow()
    } finally {
      child.kill('SIGKILL')
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})


describe('embedded default', () => {
  it('keeps its data under DATA_DIR across a restart and creates the first admin once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'policia-embedded-'))
    const env = {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      METRICS_PORT: '0',
      JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
      ENCRYPTION_KEY: TEST_KEY,
    }
    try {
      const first = await buildApp({ config: loadConfig(env), logger: false })
      expect(first.databaseKind).toBe('embedded')
      expect(first.stores.kind).toBe('memory')
      const generated = first.firstLogin?.generatedPassword
      expect(first.firstLogin?.username).toBe('admin')
      expect(generated).toMatch(/^[\w-]{16}$/)
      const api = client(first, await login(first, 'admin', generated))
      const created = await api.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Persistente' })
      expect(created.status).toBe(201)
      await first.close()

      const second = await buildApp({ config: loadConfig(env), logger: false })
      try {
        expect(second.firstLogin).toBeUndefined()
        const api2 = client(second, await login(second, 'admin', generated))
        const again = await api2.get(`/sala092/${created.body.data._id as string}`)
        expect(again.body.data).toEqual(created.body.data)
        const next = await api2.post('/sala092', { tipo_incidencia: 'normal', descripcion: 'Siguiente' })
        expect(next.body.data._id).toMatch(/-00002$/)
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
