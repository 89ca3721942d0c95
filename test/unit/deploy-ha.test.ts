/**
 * `npm run deploy:check` on the highly available set (deploy/check-ha.ts;
 * docs/operations.md "High availability"): the shipped files pass, and each
 * setting the fault suite showed to matter is refused when it is changed.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkHa } from '../../deploy/check-ha.js'

const roots: string[] = []
afterAll(() => { for (const r of roots) rmSync(r, { recursive: true, force: true }) })

/** A copy of deploy/ with `edits` (file → [from, to]) applied; the problems checkHa finds in it, and what loadConfig was given. */
async function check (edits: Record<string, [string | RegExp, string]> = {}): Promise<{ problems: string[], configs: Array<Record<string, string>> }> {
  const root = mkdtempSync(join(tmpdir(), 'deploy-ha-'))
  roots.push(root)
  cpSync('deploy', join(root, 'deploy'), { recursive: true })
  for (const [file, [from, to]] of Object.entries(edits)) {
    const path = join(root, 'deploy', file)
    const text = readFileSync(path, 'utf8')
    expect(text.replace(from, to), `${file} unchanged`).not.toBe(text)
    writeFileSync(path, text.replace(from, to))
  }
  const problems: string[] = []
  const configs: Array<Record<string, string>> = []
  await checkHa(root, { problem: (p) => problems.push(p), ok: () => {} }, (_source, env) => { configs.push(env) }, {})
  return { problems, configs }
}

describe('the highly available set', () => {
  it('passes as shipped, and gives loadConfig the Sentinels and the Cluster\'s primary Service', async () => {
    const { problems, configs } = await check()
    expect(problems).toEqual([])
    expect(configs).toEqual([expect.objectContaining({ DATABASE_URL: 'postgres://policia:CHANGE_ME@policia-db-rw:5432/policia', REDIS_SENTINEL_NAME: 'policia' })])
  })

  it('refuses asynchronous replication, the etcd3 API, HAProxy off GET /primary, and Sentinels the service is not given', async () => {
    expect((await check({ 'ha/patroni.yml': ['synchronous_mode: true', 'synchronous_mode: false'] })).problems).toEqual([expect.stringMatching(/synchronous_mode must be true/)])
    expect((await check({ 'ha/patroni.yml': [/^etcd:/m, 'etcd3:'] })).problems).toEqual([expect.stringMatching(/use etcd's v2 API/)])
    expect((await check({ 'ha/haproxy.cfg': ['option httpchk GET /primary', 'option httpchk GET /health'] })).problems).toContainEqual(expect.stringMatching(/route to the member whose Patroni answers GET \/primary/))
    expect((await check({ 'ha/sentinel.conf': ['monitor policia', 'monitor otro'] })).problems).toEqual([expect.stringMatching(/REDIS_SENTINEL_NAME "policia" is not the group .* \("otro"\)/)])
    expect((await check({ 'k8s/ha/postgres-cluster.yaml': ['maxSyncReplicas: 1', 'maxSyncReplicas: 0'] })).problems).toEqual([expect.stringMatching(/synchronous replication/)])
    expect((await check({ 'k8s/ha/secret.yaml': ['@policia-db-rw:', '@policia-db-r:'] })).problems).toEqual([expect.stringMatching(/DATABASE_URL must point at the Cluster's primary Service policia-db-rw/)])
    expect((await check({ 'k8s/ha/secret.yaml': [',policia-redis-2.policia-redis:26379', ''] })).problems).toEqual([expect.stringMatching(/REDIS_SENTINELS must name the StatefulSet's Sentinels/)])
  })
})
