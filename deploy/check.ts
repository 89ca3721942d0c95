/**
 * `npm run deploy:check [-- --write]`: validates deploy/ without a
 * container engine or a cluster (docs/operator-guide.md "Deploy", what is and is not
 * validated). Exit 1 on any problem, each named with its fix.
 *
 * - Kubernetes (deploy/k8s/*.yaml): every object against the bundled
 *   Kubernetes schemas (kubernetes-models); references between them
 *   (ConfigMaps, Secrets, claims, selectors); probes on /ready and /health;
 *   non-root security context and resources; a NetworkPolicy selecting the
 *   service's pods (deploy/check-network.ts); the modules ConfigMap equals
 *   modules.yaml (`--write` regenerates it); the ConfigMap and Secret,
 *   placeholders filled, pass the service's own loadConfig.
 * - Compose: `docker compose config` (or docker-compose) when present;
 *   every ${VAR} it uses defined in env.example; health-gated depends_on,
 *   a healthcheck and a restart policy per long-running service; only nginx
 *   publishes a port and the instances trust its address; env.example
 *   (placeholders filled) passes loadConfig.
 * - The highly available set (deploy/check-ha.ts): deploy/ha/ and
 *   docker-compose.ha.yml, deploy/k8s/ha/ (CloudNativePG, Redis Sentinel).
 * - No TRUST_PROXY in deploy/ is a bare hop count (deploy/check-network.ts).
 * - nginx (deploy/check-nginx.ts): keep-alive upstream below KEEP_ALIVE_TIMEOUT,
 *   body size for uploads and imports, `nginx -t` when installed.
 * - Dockerfile: maintained Node LTS slim base, every source folder of the
 *   build copied, the workspaces' package.json before each npm ci, non-root
 *   USER, HEALTHCHECK, dist/bin/server.js; and the
 *   compiled commands (tsc into .deploy-check/) answer --help under plain
 *   node, as they do in the image.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { loadConfig } from '../core/config.js'
import { loadRegistry } from '../core/registry/load.js'
import { checkComposeNetwork, checkNetworkPolicy, checkTrustProxy } from './check-network.js'
import { checkDelivery, composeInstances, kubernetesInstances } from './check-delivery.js'
import { checkNginx } from './check-nginx.js'
import { loadObjects, validateObjects } from './k8s-objects.js'
import { checkHa } from './check-ha.js'

const ROOT = resolve(import.meta.dirname, '..')
const K8S = join(ROOT, 'deploy/k8s')
const MODULES_CM = join(K8S, 'modules-configmap.yaml')
const problems: string[] = []
const notes: string[] = []
const problem = (p: string): void => { problems.push(p) }
const ok = (n: string): void => { notes.push(n) }
const report = { problem, ok }

type Obj = Record<string, any>

/** Values every placeholder is replaced by before loadConfig reads them. */
const FILLED: Record<string, string> = {
  JWT_SECRET: 'x'.repeat(64),
  ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  ADMIN_PASSWORD: 'a-long-enough-password',
  DB_PASSWORD: 'pw',
  DB_SUPERUSER_PASSWORD: 'pw',
}
function configOf (source: string, env: Record<string, string>): void {
  const filled = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith('CHANGE_ME') ? (FILLED[k] ?? v) : v]))
  try {
    loadConfig({ ...filled, DATA_DIR: mkdtempSync(join(tmpdir(), 'deploy-check-')), MODULES_FILE: join(ROOT, 'modules.yaml') })
    ok(`${source}: accepted by loadConfig (placeholders filled)`)
  } catch (err) { problem(`${source}: the service would refuse it: ${(err as Error).message}`) }
}

function modulesConfigMap (): string {
  const text = readFileSync(join(ROOT, 'modules.yaml'), 'utf8')
  return '# Generated from modules.yaml by `npm run deploy:check -- --write`; do not edit by hand.\n' + stringify({
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'policia-modules', labels: { 'app.kubernetes.io/name': 'policia-records' } }, data: { 'modules.yaml': text },
  }, { lineWidth: 0, blockQuote: 'literal' })
}

async function checkKubernetes (write: boolean): Promise<void> {
  if (write) writeFileSync(MODULES_CM, modulesConfigMap())
  if (!existsSync(MODULES_CM) || readFileSync(MODULES_CM, 'utf8') !== modulesConfigMap()) {
    problem('deploy/k8s/modules-configmap.yaml differs from modules.yaml: run npm run deploy:check -- --write')
  }
  const objects = loadObjects(K8S, ROOT, report)
  await validateObjects(objects, report)
  const named = (kind: string, name: string): Obj | undefined => objects.find((o) => o.obj.kind === kind && o.obj.metadata?.name === name)?.obj
  const workloads = objects.filter((o) => ['Deployment', 'Job'].includes(String(o.obj.kind)))
  for (const { file, obj } of workloads) {
    const pod = obj.spec.template.spec as Obj
    const where = `${file} ${String(obj.kind)} ${String(obj.metadata.name)}`
    for (const c of pod.containers as Obj[]) {
      for (const ref of (c.envFrom ?? []) as Obj[]) {
        if (ref.configMapRef !== undefined && named('ConfigMap', ref.configMapRef.name) === undefined) problem(`${where}: envFrom ConfigMap ${String(ref.configMapRef.name)} is not defined`)
        if (ref.secretRef !== undefined && named('Secret', ref.secretRef.name) === undefined) problem(`${where}: envFrom Secret ${String(ref.secretRef.name)} is not defined`)
      }
      if (c.resources?.requests === undefined || c.resources?.limits?.memory === undefined) problem(`${where}: container ${String(c.name)} needs resources.requests and a memory limit`)
      if (c.securityContext?.allowPrivilegeEscalation !== false) problem(`${where}: container ${String(c.name)} must set allowPrivilegeEscalation: false`)
    }
    if (pod.securityContext?.runAsNonRoot !== true) problem(`${where}: the pod must run as non-root (securityContext.runAsNonRoot: true)`)
    for (const v of (pod.volumes ?? []) as Obj[]) {
      if (v.configMap !== undefined && named('ConfigMap', v.configMap.name) === undefined) problem(`${where}: volume ${String(v.name)}: ConfigMap ${String(v.configMap.name)} is not defined`)
      if (v.persistentVolumeClaim !== undefined && named('PersistentVolumeClaim', v.persistentVolumeClaim.claimName) === undefined) problem(`${where}: volume ${String(v.name)}: claim ${String(v.persistentVolumeClaim.claimName)} is not defined`)
    }
  }
  const deployment = named('Deployment', 'policia-records')
  if (deployment === undefined) { problem('deploy/k8s: no Deployment policia-records'); return }
  checkDelivery(kubernetesInstances(objects.filter((o) => o.obj.kind === 'Deployment').map((o) => o.obj), deployment), report)
  const api = (deployment.spec.template.spec.containers as Obj[])[0]!
  if (api.readinessProbe?.httpGet?.path !== '/ready') problem('Deployment: the readiness probe must be GET /ready')
  if (api.livenessProbe?.httpGet?.path !== '/health') problem('Deployment: the liveness probe must be GET /health (it answers while the service waits for its dependencies)')
  const mounts = (api.volumeMounts ?? []) as Obj[]
  const env = { ...named('ConfigMap', 'policia-env')?.data, ...named('Secret', 'policia-secrets')?.stringData } as Record<string, string>
  if (!mounts.some((m) => m.mountPath === env.CHECKPOINT_DIR)) problem(`Deployment: CHECKPOINT_DIR ${String(env.CHECKPOINT_DIR)} is not on a mounted volume`)
  if (!mounts.some((m) => typeof env.MODULES_FILE === 'string' && env.MODULES_FILE.startsWith(`${String(m.mountPath)}/`))) problem(`Deployment: MODULES_FILE ${String(env.MODULES_FILE)} is not on a mounted volume`)
  const podLabels = deployment.spec.template.metadata.labels as Obj
  for (const kind of ['Service', 'PodDisruptionBudget']) {
    const o = objects.find((x) => x.obj.kind === kind)?.obj
    if (o === undefined) { problem(`deploy/k8s: no ${kind}`); continue }
    const selector = (kind === 'Service' ? o.spec.selector : o.spec.selector.matchLabels) as Obj
    if (!Object.entries(selector).every(([k, v]) => podLabels[k] === v)) problem(`${kind} ${String(o.metadata.name)}: its selector does not match the Deployment's pods`)
  }
  checkNetworkPolicy(objects.map((o) => o.obj), podLabels, 'http', report)
  if (!objects.some((o) => o.obj.kind === 'Job' && JSON.stringify(o.obj.spec.template.spec.containers[0].command).includes('dist/bin/migrate.js'))) problem('deploy/k8s: no Job running node dist/bin/migrate.js')
  configOf('deploy/k8s ConfigMap policia-env + Secret policia-secrets', env)
  try { loadRegistry(join(ROOT, 'modules.yaml')); ok('modules.yaml (the ConfigMap\'s content): valid') } catch (err) { problem(`modules.yaml: ${(err as Error).message}`) }
}

function composeCommand (): string[] | undefined {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose']
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose']
  return undefined
}

/** `${NAME}`, `${NAME:?message}` and `${NAME:-default}` of a compose value, from `env`. */
const interpolate = (value: string, env: Record<string, string>): string =>
  value.replace(/\$\{([A-Z_][A-Z0-9_]*)(?::[?-][^}]*)?\}/g, (_, name: string) => env[name] ?? '')

/** deploy/<file>: the single-server deployment (docker-compose.yml) or the `ha` one (docker-compose.ha.yml). */
function checkCompose (file: string): void {
  const text = readFileSync(join(ROOT, 'deploy', file), 'utf8')
  const envText = readFileSync(join(ROOT, 'deploy/env.example'), 'utf8')
  const env = Object.fromEntries(envText.split('\n').filter((l) => /^[A-Z_][A-Z0-9_]*=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
  const used = new Set([...text.replace(/^\s*#.*$/gm, '').matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]!))
  for (const name of used) if (!(name in env)) problem(`deploy/${file} uses \${${name}}, which deploy/env.example does not define`)
  ok(`deploy/${file}: every variable it uses (${[...used].join(', ')}) is defined in deploy/env.example`)
  const compose = parseAllDocuments(text, { merge: true })[0]!.toJS({ maxAliasCount: -1 }) as Obj
  for (const [name, svc] of Object.entries(compose.services as Record<string, Obj>)) {
    const oneShot = svc.restart === 'no'
    if (!oneShot && svc.restart === undefined) problem(`compose service ${name}: no restart policy`)
    if (!oneShot && (svc.healthcheck === undefined || svc.healthcheck.disable === true)) problem(`compose service ${name}: no healthcheck`)
    for (const [dep, cond] of Object.entries((svc.depends_on ?? {}) as Record<string, Obj>)) {
      if (Array.isArray(svc.depends_on) || !['service_healthy', 'service_completed_successfully'].includes(cond?.condition)) problem(`compose service ${name}: depends_on ${dep} must wait for condition service_healthy (or service_completed_successfully)`)
    }
  }
  const apis = Object.entries(compose.services as Record<string, Obj>).filter(([, s]) => String(s.image ?? '').startsWith('policia-records'))
  checkDelivery(composeInstances(compose), report)
  for (const [name, svc] of apis) {
    if (!JSON.stringify(svc.healthcheck?.test ?? svc.command ?? '').includes('/ready') && svc.restart !== 'no') problem(`compose service ${name}: its healthcheck must ask /ready`)
  }
  checkComposeNetwork(compose, report, file)
  // What the instances get: env.example (.env) with the compose file's own environment over it.
  const own = Object.fromEntries(Object.entries((apis[0]?.[1].environment ?? {}) as Record<string, unknown>).map(([k, v]) => [k, interpolate(String(v), { ...env, ...FILLED })]))
  configOf(`deploy/env.example + deploy/${file}'s environment (${Object.keys(own).join(', ')})`, { ...env, ...own })
  const cmd = composeCommand()
  if (cmd === undefined) { notes.push('SKIPPED: docker compose config (neither `docker compose` nor docker-compose is installed)'); return }
  // A copy with env.example as .env, so that env_file and the interpolation resolve.
  const dir = mkdtempSync(join(tmpdir(), 'deploy-compose-'))
  try {
    cpSync(join(ROOT, 'deploy'), join(dir, 'deploy'), { recursive: true, filter: (src) => !src.includes('/k8s') })
    writeFileSync(join(dir, 'deploy/.env'), envText)
    const r = spawnSync(cmd[0]!, [...cmd.slice(1), '-f', join(dir, 'deploy', file), '--env-file', join(dir, 'deploy/.env'), 'config', '-q'], { encoding: 'utf8' })
    if (r.status !== 0) problem(`${cmd.join(' ')} -f deploy/${file} config: ${r.stderr.trim() || r.stdout.trim()}`)
    else ok(`deploy/${file}: accepted by \`${cmd.join(' ')} config\``)
  } finally { rmSync(dir, { recursive: true, force: true }) }
}

function checkDockerfile (): void {
  const text = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8')
  const froms = [...text.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!)
  for (const f of froms) if (!/^node:(22|24)(\.\d+)*-(bookworm|trixie)-slim$|^node:(22|24)-slim$/.test(f)) problem(`deploy/Dockerfile: FROM ${f}: use a maintained Node LTS slim image (node:22-bookworm-slim or node:24-bookworm-slim)`)
  const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] }
  const copied = new Set([...text.matchAll(/^COPY\s+(?!--from)(\S+)/gm)].map((m) => m[1]!))
  for (const src of build.include) if (!copied.has(src)) problem(`deploy/Dockerfile: the build compiles ${src} (tsconfig.build.json) but the image never copies it: add COPY ${src} ${src}`)
  for (const src of copied) if (!existsSync(join(ROOT, src))) problem(`deploy/Dockerfile: COPY ${src}: no such file in the repository`)
  // npm ci installs the workspaces too (the console): each stage copies their package.json before it.
  const workspaces = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces?: string[] }).workspaces ?? []
  for (const stage of text.split(/^FROM\s/m).slice(1)) {
    const ci = stage.search(/^RUN npm ci\b/m)
    if (ci < 0) continue
    for (const ws of workspaces) if (!new RegExp(`^COPY ${ws}/package\\.json `, 'm').test(stage.slice(0, ci))) problem(`deploy/Dockerfile: npm ci installs the workspace ${ws}: COPY ${ws}/package.json ${ws}/ before it`)
  }
  const user = text.lastIndexOf('\nUSER ')
  if (user < 0 || /\nUSER\s+root\b/.test(text.slice(user))) problem('deploy/Dockerfile: the runtime stage must switch to a non-root USER')
  if (!/^HEALTHCHECK .*\/ready/m.test(text)) problem('deploy/Dockerfile: no HEALTHCHECK on /ready')
  if (!/^CMD \["node", "dist\/bin\/server\.js"\]/m.test(text)) problem('deploy/Dockerfile: CMD must run node dist/bin/server.js')
  ok(`deploy/Dockerfile: base ${froms.join(', ')}; copies every compiled folder and the workspaces' package.json before npm ci; non-root; HEALTHCHECK /ready`)
  if (spawnSync('hadolint', ['--version'], { stdio: 'ignore' }).status === 0) {
    const r = spawnSync('hadolint', [join(ROOT, 'deploy/Dockerfile')], { encoding: 'utf8' })
    if (r.status !== 0) problem(`hadolint: ${r.stdout}`)
    else ok('deploy/Dockerfile: hadolint clean')
  } else notes.push('SKIPPED: hadolint (not installed); the Dockerfile checks above stand in for it')
}

/** The compiled commands answer --help under plain node, with no tsx: what the image runs. */
function checkCompiledCommands (): void {
  const out = join(ROOT, '.deploy-check')
  rmSync(out, { recursive: true, force: true })
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', out], { encoding: 'utf8', cwd: ROOT })
  if (tsc.status !== 0) { problem(`npm run build failed: ${tsc.stdout}${tsc.stderr}`); return }
  // A command is a file of bin/ a script of package.json runs (`tsx bin/<c>.ts`, `node dist/bin/<c>.js`);
  // the others are modules the commands share (bin/records-session.ts).
  const scripts = Object.values((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts)
  const run = new Set(scripts.flatMap((s) => [...s.matchAll(/(?:tsx bin\/([\w-]+)\.ts|node dist\/bin\/([\w-]+)\.js)/g)].map((m) => `${m[1] ?? m[2]!}.js`)))
  const commands = readdirSync(join(out, 'bin')).filter((f) => f.endsWith('.js') && run.has(f))
  for (const c of commands) {
    const r = spawnSync(process.execPath, [join(out, 'bin', c), '--help'], { encoding: 'utf8', cwd: ROOT, env: { PATH: process.env.PATH } })
    if (r.status !== 0 || !/Exit status/.test(r.stdout)) problem(`node dist/bin/${c} --help failed (${String(r.status)}): ${r.stderr.trim()}`)
  }
  ok(`compiled commands answer --help under plain node: ${commands.map((c) => `dist/bin/${c}`).join(', ')}`)
  rmSync(out, { recursive: true, force: true })
}

const write = process.argv.includes('--write')
await checkKubernetes(write)
{
  const base = loadObjects(K8S, ROOT, { problem: () => undefined, ok: () => undefined }).find((o) => o.obj.kind === 'ConfigMap' && o.obj.metadata?.name === 'policia-env')
  await checkHa(ROOT, report, configOf, (base?.obj.data ?? {}) as Record<string, string>)
}
checkCompose('docker-compose.yml')
checkCompose('docker-compose.ha.yml')
checkTrustProxy(join(ROOT, 'deploy'), report)
{
  // The service's defaults, and any KEEP_ALIVE_TIMEOUT deploy/ sets.
  const defaults = loadConfig({ ...FILLED, DATA_DIR: mkdtempSync(join(tmpdir(), 'deploy-check-')), MODULES_FILE: join(ROOT, 'modules.yaml') })
  const set = [join(ROOT, 'deploy/env.example'), join(K8S, 'config.yaml'), join(ROOT, 'deploy/docker-compose.yml')]
    .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/^\s*(?:-\s*)?KEEP_ALIVE_TIMEOUT\s*[:=]\s*["']?([^"'\s#]+)/gm)].map((m) => m[1]!))
    .map((v) => loadConfig({ ...FILLED, DATA_DIR: mkdtempSync(join(tmpdir(), 'deploy-check-')), KEEP_ALIVE_TIMEOUT: v }).keepAliveTimeoutMs)
  checkNginx(join(ROOT, 'deploy'), ['nginx.conf', 'nginx-tls.conf'], [defaults.keepAliveTimeoutMs, ...set], Math.max(defaults.importMaxBytes, defaults.files.maxBytes), report)
}
checkDockerfile()
if (!process.argv.includes('--sin-compilar')) checkCompiledCommands()
for (const n of notes) process.stdout.write(`  ${n}\n`)
if (problems.length > 0) {
  process.stderr.write(`\ndeploy/: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}\n`)
  process.exit(1)
}
process.stdout.write('deploy/: OK\n')
