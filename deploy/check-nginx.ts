/**
 * The checks of `npm run deploy:check` on the shipped nginx configurations
 * (deploy/nginx.conf, deploy/nginx-tls.conf; docs/operator-guide.md "nginx in
 * front"): keep-alive to the instances (HTTP/1.1, `Connection ""`, a
 * `keepalive` pool), an idle upstream timeout below the service's
 * KEEP_ALIVE_TIMEOUT (its default, and any value deploy/ sets), a
 * `client_max_body_size` that admits the default upload and import sizes,
 * and `nginx -t` on each when nginx is installed (hosts and paths that only
 * exist in a container replaced).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Report } from './check-network.js'

/** nginx's size syntax (64m, 2k, 1048576) in bytes. */
function bytes (size: string): number {
  const m = /^(\d+)([kKmMgG]?)$/.exec(size)
  if (m === null) return Number.NaN
  return Number(m[1]) * ({ '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'])
}

/** nginx's time syntax (60s, 1m, 75) in ms. */
function ms (time: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(time)
  return m === null ? Number.NaN : Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
}

/**
 * `files`: the configurations, relative to `root`; `keepAliveMs`: the service's KEEP_ALIVE_TIMEOUT values
 * in deploy/ (its default included); `bodyBytes`: the largest body the service takes by default.
 */
export function checkNginx (root: string, files: readonly string[], keepAliveMs: readonly number[], bodyBytes: number, report: Report): void {
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8').replace(/#.*$/gm, '')
    const upstream = /upstream\s+\S+\s*\{([^}]*)\}/.exec(text)?.[1] ?? ''
    const problems: string[] = []
    if (!/^\s*keepalive\s+\d+;/m.test(upstream)) problems.push('its upstream keeps no idle connections (`keepalive 32;`)')
    const idle = ms(/^\s*keepalive_timeout\s+(\S+);/m.exec(upstream)?.[1] ?? '60s')
    const shortest = Math.min(...keepAliveMs)
    if (!(idle < shortest)) problems.push(`its upstream keepalive_timeout (${idle / 1000} s) must be below the service's KEEP_ALIVE_TIMEOUT (${shortest / 1000} s), or a reused connection may be closed under a request (502)`)
    if (!/proxy_http_version\s+1\.1;/.test(text)) problems.push('it needs `proxy_http_version 1.1;` (keep-alive to the instances)')
    if (!/proxy_set_header\s+Connection\s+"";/.test(text)) problems.push('it needs `proxy_set_header Connection "";` (keep-alive to the instances)')
    const sizes = [...text.matchAll(/client_max_body_size\s+(\S+);/g)].map((m) => bytes(m[1]!))
    if (sizes.length === 0 || sizes.some((b) => !(b >= bodyBytes))) problems.push(`client_max_body_size must admit ${bodyBytes / 1024 / 1024} MiB (FILE_MAX_BYTES, IMPORT_MAX_BYTES)`)
    for (const p of problems) report.problem(`deploy/${file}: ${p}`)
    if (problems.length === 0) report.ok(`deploy/${file}: keep-alive upstream (idle ${idle / 1000} s < KEEP_ALIVE_TIMEOUT ${shortest / 1000} s), HTTP/1.1, bodies up to ${Math.min(...sizes) / 1024 / 1024} MiB`)
    syntax(root, file, report)
  }
}

/** `nginx -t` on the file as a server block, upstream hosts and container paths replaced; skipped without nginx. */
function syntax (root: string, file: string, report: Report): void {
  if (spawnSync('nginx', ['-v']).error !== undefined) { report.ok(`deploy/${file}: nginx -t skipped (nginx is not installed)`); return }
  const dir = mkdtempSync(join(tmpdir(), 'deploy-check-nginx-'))
  try {
    const conf = readFileSync(join(root, file), 'utf8').replace(/server\s+api\d+:3000;/g, 'server 127.0.0.1:3000;').replaceAll('/etc/nginx/tls/', `${dir}/`)
    if (conf.includes(`${dir}/`)) {
      const cert = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', join(dir, 'privkey.pem'), '-out', join(dir, 'fullchain.pem')], { stdio: 'ignore' })
      if (cert.status !== 0) { report.ok(`deploy/${file}: nginx -t skipped (openssl could not make a test certificate)`); return }
    }
    writeFileSync(join(dir, 'server.conf'), conf)
    writeFileSync(join(dir, 'nginx.conf'), `error_log ${dir}/error.log; pid ${dir}/nginx.pid; events {} http { client_body_temp_path ${dir}/b; proxy_temp_path ${dir}/p; fastcgi_temp_path ${dir}/f; uwsgi_temp_path ${dir}/u; scgi_temp_path ${dir}/s; access_log off; include ${dir}/server.conf; }\n`)
    const run = spawnSync('nginx', ['-t', '-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { encoding: 'utf8' })
    if (run.status === 0) report.ok(`deploy/${file}: nginx -t accepts it`)
    else report.problem(`deploy/${file}: nginx -t refuses it: ${`${run.stdout}${run.stderr}`.trim().split('\n').filter((l) => /emerg|error/.test(l)).join(' ')}`)
  } finally { rmSync(dir, { recursive: true, force: true }) }
}
