/**
 * nginx in front of the instances, with a configuration of the test's own
 * in its own directory: round robin over the upstreams, keep-alive to them,
 * and a request passed to the next instance only when the connection to
 * one fails before the request is sent (`proxy_next_upstream error
 * timeout` without `non_idempotent`): a POST is never sent twice.
 */
import type { ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '../../helpers/free-port.js'
import { startProcess, stopProcess, waitFor } from './processes.js'

export interface Nginx {
  readonly url: string
  /** Requests per upstream address so far (from the access log), e.g. {"127.0.0.1:4100": 1012}. */
  perUpstream (): Record<string, number>
  stop (): Promise<void>
}

export async function startNginx (dir: string, upstreamPorts: number[]): Promise<Nginx> {
  const port = await freePort()
  writeFileSync(join(dir, 'nginx.conf'), `
worker_processes 1;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  log_format upstreams '$status $upstream_addr $request_method $uri';
  access_log ${dir}/nginx-access.log upstreams;
  client_body_temp_path ${dir}/nginx-body;
  # As deploy/nginx.conf admits an import's body (IMPORT_MAX_BYTES), not nginx's default 1 MiB.
  client_max_body_size 64m;
  proxy_temp_path ${dir}/nginx-proxy;
  fastcgi_temp_path ${dir}/nginx-fastcgi;
  uwsgi_temp_path ${dir}/nginx-uwsgi;
  scgi_temp_path ${dir}/nginx-scgi;
  upstream service {
${upstreamPorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n')}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_connect_timeout 2s;
      proxy_read_timeout 60s;
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 3;
    }
  }
}
`)
  const child: ChildProcess = startProcess('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'nginx-error.log'), '-g', `daemon off; pid ${dir}/nginx.pid;`], { logFile: join(dir, 'nginx.out') })
  const url = `http://127.0.0.1:${port}`
  await waitFor('nginx', async () => (await fetch(`${url}/health`)).status === 200, 30_000)
  return {
    url,
    perUpstream () {
      const counts: Record<string, number> = {}
      for (const line of readFileSync(join(dir, 'nginx-access.log'), 'utf8').split('\n')) {
        // "$upstream_addr" lists every upstream tried ("a:1, b:2" when the first refused); the last answered.
        const addr = line.split(' ')[1] === undefined ? undefined : line.slice(line.indexOf(' ') + 1).split(' ').filter((w) => /^\d+\.\d+\.\d+\.\d+:\d+,?$/.test(w)).pop()?.replace(',', '')
        if (addr !== undefined) counts[addr] = (counts[addr] ?? 0) + 1
      }
      return counts
    },
    stop: () => stopProcess(child, 'SIGTERM'),
  }
}
