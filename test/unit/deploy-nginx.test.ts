/**
 * `npm run deploy:check` checks the shipped nginx configurations
 * (deploy/check-nginx.ts; docs/operator-guide.md "nginx in front"): both pass;
 * the configuration shipped before (HTTP/1.0 upstream, 2m bodies) and one
 * whose idle upstream timeout outlives the service's are refused, each
 * problem named.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkNginx } from '../../deploy/check-nginx.js'

const dir = mkdtempSync(join(tmpdir(), 'deploy-nginx-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })

const MIB50 = 50 * 1024 * 1024

function problems (root: string, file: string, keepAliveMs = [75_000]): string[] {
  const found: string[] = []
  checkNginx(root, [file], keepAliveMs, MIB50, { problem: (p) => found.push(p), ok: () => {} })
  return found
}

describe('the nginx configurations', () => {
  it('passes deploy/nginx.conf and deploy/nginx-tls.conf as shipped', () => {
    expect(problems('deploy', 'nginx.conf')).toEqual([])
    expect(problems('deploy', 'nginx-tls.conf')).toEqual([])
  })

  it('refuses the configuration without upstream keep-alive and with 2m bodies, naming each problem', () => {
    writeFileSync(join(dir, 'old.conf'), `upstream policia { server api1:3000; server api2:3000; }
server {
  listen 80;
  client_max_body_size 2m;
  location / { proxy_pass http://policia; proxy_next_upstream error timeout; }
}
`)
    expect(problems(dir, 'old.conf')).toEqual([
      'deploy/old.conf: its upstream keeps no idle connections (`keepalive 32;`)',
      'deploy/old.conf: it needs `proxy_http_version 1.1;` (keep-alive to the instances)',
      'deploy/old.conf: it needs `proxy_set_header Connection "";` (keep-alive to the instances)',
      'deploy/old.conf: client_max_body_size must admit 50 MiB (FILE_MAX_BYTES, IMPORT_MAX_BYTES)',
    ])
  })

  it('refuses an idle upstream timeout that is not below KEEP_ALIVE_TIMEOUT (the default one, or one deploy/ sets)', () => {
    writeFileSync(join(dir, 'long.conf'), readFileSync('deploy/nginx.conf', 'utf8').replace('keepalive_timeout 60s;', 'keepalive_timeout 90s;'))
    expect(problems(dir, 'long.conf')).toEqual([expect.stringContaining('keepalive_timeout (90 s) must be below the service\'s KEEP_ALIVE_TIMEOUT (75 s)')])
    expect(problems('deploy', 'nginx.conf', [75_000, 30_000])).toEqual([expect.stringContaining('keepalive_timeout (60 s) must be below the service\'s KEEP_ALIVE_TIMEOUT (30 s)')])
  })
})
