/**
 * TLS termination at nginx with the shipped example, deploy/nginx-tls.conf
 * (docs/operations.md): a self-signed certificate made with `openssl req
 * -x509`, nginx run with the example (only its ports, upstream and
 * certificate paths replaced) in front of one instance on loopback. Over
 * https, with the certificate trusted, /health answers and a login
 * succeeds; TLS older than 1.2 is refused; plain http is redirected to https.
 */
import { execFileSync, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import type { TLSSocket } from 'node:tls'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { ADMIN, createHarness, type Harness } from '../helpers/app.js'
import { freePort } from '../helpers/free-port.js'
import { startProcess, stopProcess, waitFor } from './helpers/processes.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** A client that offers only TLS 1.0 and 1.1 (and would accept them: security level 0). */
const OLD_TLS = { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' } as const

interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string, protocol?: string }

function https (port: number, ca: Buffer, method: string, path: string, body?: unknown, tls: { minVersion?: 'TLSv1', maxVersion?: 'TLSv1.1', ciphers?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, method, path, ca, servername: 'localhost', ...tls, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      const protocol = (res.socket as TLSSocket).getProtocol() ?? undefined
      res.on('data', (d: Buffer) => { text += String(d) })
      res.on('end', () => { resolve({ status: res.statusCode!, headers: res.headers, body: text, protocol }) })
    })
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

function http (port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host: 'policia.example' } }, (res) => {
      res.resume()
      res.on('end', () => { resolve({ status: res.statusCode!, headers: res.headers, body: '' }) })
    })
    req.on('error', reject)
    req.end()
  })
}

describe('TLS at nginx with deploy/nginx-tls.conf', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nginx-tls-'))
  let h: Harness
  let app: FastifyInstance
  let nginx: ChildProcess | undefined
  let httpsPort: number
  let httpPort: number
  let ca: Buffer

  beforeAll(async () => {
    chmodSync(dir, 0o755) // nginx's workers run unprivileged
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'privkey.pem'), '-out', join(dir, 'fullchain.pem')], { stdio: 'ignore' })
    ca = readFileSync(join(dir, 'fullchain.pem'))

    h = await createHarness()
    app = await h.app({ env: { TRUST_PROXY: '1' } })
    const apiPort = await freePort()
    await app.listen({ host: '127.0.0.1', port: apiPort })

    httpsPort = await freePort()
    httpPort = await freePort()
    // The example as shipped; only what differs on this machine is replaced.
    const example = readFileSync(join(ROOT, 'deploy/nginx-tls.conf'), 'utf8')
    const conf = example
      .replace(/server api1:3000;\s*server api2:3000;/, `server 127.0.0.1:${apiPort};`)
      .replace('listen 80;', `listen 127.0.0.1:${httpPort};`)
      .replace('listen 443 ssl;', `listen 127.0.0.1:${httpsPort} ssl;`)
      .replaceAll('/etc/nginx/tls/', `${dir}/`)
    expect(conf).not.toBe(example)
    expect(conf.replace(/#.*$/gm, '')).not.toMatch(/api1|listen 80;|listen 443|\/etc\/nginx/)
    writeFileSync(join(dir, 'default.conf'), conf)
    writeFileSync(join(dir, 'nginx.conf'), `
worker_processes 1;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/default.conf;
}
`)
    nginx = startProcess('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', `daemon off; pid ${dir}/nginx.pid;`], { logFile: join(dir, 'nginx.out') })
    await waitFor(`nginx (see ${dir}/error.log)`, async () => (await https(httpsPort, ca, 'GET', '/health')).status === 200, 30_000)
  })

  afterAll(async () => {
    if (nginx !== undefined) await stopProcess(nginx)
    await h?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('serves /health and a login over https with the certificate trusted', async () => {
    const health = await https(httpsPort, ca, 'GET', '/health')
    expect(health.status).toBe(200)
    expect(['TLSv1.2', 'TLSv1.3']).toContain(health.protocol)
    const res = await https(httpsPort, ca, 'POST', '/auth/login', ADMIN)
    expect(res.status, res.body).toBe(200)
    const token = JSON.parse(res.body).data.token as string
    expect(token.split('.')).toHaveLength(3)
  })

  it('refuses a certificate it was not told to trust, and TLS older than 1.2', async () => {
    await expect(https(httpsPort, Buffer.from(''), 'GET', '/health').then(() => 'answered', (err: Error) => String(err))).resolves.toMatch(/self.signed|certificate/i)
    await expect(https(httpsPort, ca, 'GET', '/health', undefined, OLD_TLS).then(() => 'answered', () => 'refused')).resolves.toBe('refused')
  })

  it('redirects plain http to https', async () => {
    const res = await http(httpPort, '/denuncias?limit=1')
    expect(res.status).toBe(301)
    expect(res.headers.location).toBe('https://policia.example/denuncias?limit=1')
  })
})
