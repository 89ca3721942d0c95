/**
 * The checks of `npm run deploy:check` on the highly available set
 * (docs/operations.md "High availability"): deploy/ha/ (Patroni, HAProxy,
 * Sentinel configuration of docker-compose.ha.yml) and deploy/k8s/ha/
 * (CloudNativePG Cluster, Redis with Sentinels, the Secret pointing the
 * service at them). What the fault suite proved is what is checked here:
 * synchronous replication, Patroni on etcd's v2 API, HAProxy following
 * `GET /primary` and cutting sessions of a demoted member, Sentinels whose
 * group and addresses are the ones the service is given.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse, parseAllDocuments } from 'yaml'
import type { Report } from './check-network.js'
import { loadObjects, validateObjects } from './k8s-objects.js'

type Obj = Record<string, any>
const CNPG_CLUSTER = 'postgresql.cnpg.io/v1/Cluster'

/** `sentinel monitor <name> <host> <port> <quorum>` of a Sentinel configuration. */
function monitor (text: string): { name: string, quorum: number } | undefined {
  const m = /^\s*sentinel monitor (\S+) \S+ \d+ (\d+)\s*$/m.exec(text)
  return m === null ? undefined : { name: m[1]!, quorum: Number(m[2]) }
}

function checkPatroniAndHaproxy (root: string, r: Report): void {
  const patroni = parse(readFileSync(join(root, 'deploy/ha/patroni.yml'), 'utf8')) as Obj
  if (patroni.bootstrap?.dcs?.synchronous_mode !== true) r.problem('deploy/ha/patroni.yml: bootstrap.dcs.synchronous_mode must be true (no acknowledged write lost in a failover)')
  if (patroni.etcd === undefined || patroni.etcd3 !== undefined) r.problem('deploy/ha/patroni.yml: use etcd\'s v2 API (etcd:, not etcd3:) with Debian\'s Patroni 3.0.2 (docs/decisions.md "Patroni on etcd\'s v2 API")')
  if (patroni.bootstrap?.dcs?.postgresql?.use_pg_rewind !== true) r.problem('deploy/ha/patroni.yml: bootstrap.dcs.postgresql.use_pg_rewind must be true, so that a failed primary rejoins')
  const haproxy = readFileSync(join(root, 'deploy/ha/haproxy.cfg'), 'utf8')
  if (!/option httpchk GET \/primary\b/.test(haproxy) || !/http-check expect status 200/.test(haproxy)) r.problem('deploy/ha/haproxy.cfg: route to the member whose Patroni answers GET /primary with 200 (option httpchk GET /primary, http-check expect status 200)')
  if (!/on-marked-down shutdown-sessions/.test(haproxy)) r.problem('deploy/ha/haproxy.cfg: on-marked-down shutdown-sessions, or a demoted member keeps the service\'s connections')
  if (spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0) {
    const c = spawnSync('haproxy', ['-c', '-f', join(root, 'deploy/ha/haproxy.cfg')], { encoding: 'utf8' })
    if (c.status !== 0) r.problem(`deploy/ha/haproxy.cfg: haproxy -c refuses it: ${(c.stdout + c.stderr).trim().split('\n').slice(-3).join(' ')}`)
    else r.ok('deploy/ha/haproxy.cfg: haproxy -c accepts it')
  }
  r.ok('deploy/ha/patroni.yml and haproxy.cfg: synchronous mode, etcd v2 API, pg_rewind; HAProxy on GET /primary, cutting a demoted member\'s sessions')
}

function checkComposeSentinels (root: string, r: Report): void {
  const compose = parseAllDocuments(readFileSync(join(root, 'deploy/docker-compose.ha.yml'), 'utf8'), { merge: true })[0]!.toJS({ maxAliasCount: -1 }) as Obj
  const services = compose.services as Record<string, Obj>
  const env = services.api1?.environment as Record<string, string> | undefined
  const group = monitor(readFileSync(join(root, 'deploy/ha/sentinel.conf'), 'utf8'))
  const sentinels = Object.keys(services).filter((n) => JSON.stringify(services[n]!.command ?? '').includes('redis-sentinel'))
  if (group === undefined) { r.problem('deploy/ha/sentinel.conf: no "sentinel monitor <name> <host> <port> <quorum>"'); return }
  if (env?.REDIS_SENTINEL_NAME !== group.name) r.problem(`deploy/docker-compose.ha.yml: REDIS_SENTINEL_NAME "${String(env?.REDIS_SENTINEL_NAME)}" is not the group deploy/ha/sentinel.conf monitors ("${group.name}")`)
  const listed = String(env?.REDIS_SENTINELS ?? '').split(',').map((a) => a.trim().split(':')[0])
  if (sentinels.length < 3 || listed.sort().join() !== sentinels.sort().join()) r.problem(`deploy/docker-compose.ha.yml: REDIS_SENTINELS must list the Sentinel services (${sentinels.join(', ')}), at least three`)
  if (group.quorum * 2 <= sentinels.length) r.problem(`deploy/ha/sentinel.conf: quorum ${group.quorum} is not a majority of ${sentinels.length} Sentinels`)
  r.ok(`deploy/docker-compose.ha.yml: ${sentinels.length} Sentinels of group "${group.name}" (quorum ${group.quorum}), the ones REDIS_SENTINELS names`)
}

async function checkKubernetesHa (root: string, r: Report, configOf: (source: string, env: Record<string, string>) => void, baseEnv: Record<string, string>): Promise<void> {
  const objects = loadObjects(join(root, 'deploy/k8s/ha'), root, r)
  await validateObjects(objects, r, new Set([CNPG_CLUSTER]))
  const find = (kind: string, name?: string): Obj | undefined => objects.find((o) => o.obj.kind === kind && (name === undefined || o.obj.metadata?.name === name))?.obj
  const cluster = objects.find((o) => `${String(o.obj.apiVersion)}/${String(o.obj.kind)}` === CNPG_CLUSTER)?.obj
  const secret = find('Secret', 'policia-secrets')?.stringData as Record<string, string> | undefined
  if (cluster === undefined || secret === undefined) { r.problem('deploy/k8s/ha: needs a CloudNativePG Cluster and the Secret policia-secrets'); return }
  const spec = cluster.spec as Obj
  if (!(Number(spec.instances) >= 2)) r.problem(`deploy/k8s/ha Cluster ${String(cluster.metadata.name)}: instances must be at least 2`)
  if (!(Number(spec.maxSyncReplicas) >= 1) && spec.postgresql?.synchronous === undefined) r.problem(`deploy/k8s/ha Cluster ${String(cluster.metadata.name)}: synchronous replication (maxSyncReplicas: 1 or postgresql.synchronous), or a failover may lose acknowledged writes`)
  const owner = find('Secret', spec.bootstrap?.initdb?.secret?.name)
  if (owner === undefined) r.problem(`deploy/k8s/ha Cluster ${String(cluster.metadata.name)}: bootstrap.initdb.secret ${String(spec.bootstrap?.initdb?.secret?.name)} is not defined`)
  let host = ''
  try { host = new URL(secret.DATABASE_URL ?? '').hostname } catch { /* reported below */ }
  if (host !== `${String(cluster.metadata.name)}-rw`) r.problem(`deploy/k8s/ha Secret policia-secrets: DATABASE_URL must point at the Cluster's primary Service ${String(cluster.metadata.name)}-rw (got host "${host}")`)
  const redis = find('StatefulSet')
  const script = String(find('ConfigMap', redis?.spec?.template?.spec?.volumes?.find((v: Obj) => v.configMap !== undefined)?.configMap?.name)?.data?.['sentinel.sh'] ?? '')
  const group = monitor(script.replace(/\$\w+/g, 'x').replace(/\$\([^)]*\)/g, 'x'))
  if (redis === undefined || group === undefined) { r.problem('deploy/k8s/ha: a Redis StatefulSet whose ConfigMap\'s sentinel.sh monitors a group'); return }
  const expected = Array.from({ length: Number(redis.spec.replicas) }, (_, i) => `${String(redis.metadata.name)}-${i}.${String(redis.spec.serviceName)}:26379`)
  if (secret.REDIS_SENTINELS !== expected.join(',')) r.problem(`deploy/k8s/ha Secret policia-secrets: REDIS_SENTINELS must name the StatefulSet's Sentinels, ${expected.join(',')}`)
  if (secret.REDIS_SENTINEL_NAME !== group.name) r.problem(`deploy/k8s/ha Secret policia-secrets: REDIS_SENTINEL_NAME "${String(secret.REDIS_SENTINEL_NAME)}" is not the monitored group "${group.name}"`)
  if (redis.spec.template.spec.securityContext?.runAsNonRoot !== true) r.problem('deploy/k8s/ha StatefulSet: the pods must run as non-root')
  for (const c of redis.spec.template.spec.containers as Obj[]) {
    if (c.resources?.limits?.memory === undefined || c.securityContext?.allowPrivilegeEscalation !== false) r.problem(`deploy/k8s/ha StatefulSet container ${String(c.name)}: a memory limit and allowPrivilegeEscalation: false`)
  }
  configOf('deploy/k8s ConfigMap policia-env + deploy/k8s/ha Secret policia-secrets', { ...baseEnv, ...secret })
}

export async function checkHa (root: string, r: Report, configOf: (source: string, env: Record<string, string>) => void, baseEnv: Record<string, string>): Promise<void> {
  checkPatroniAndHaproxy(root, r)
  checkComposeSentinels(root, r)
  await checkKubernetesHa(root, r, configOf, baseEnv)
}
