/**
 * The checks of `npm run deploy:check` on who can reach the instances and
 * whose X-Forwarded-For they believe (docs/operator-guide.md "Deploy"):
 *
 * - no TRUST_PROXY anywhere in deploy/ is a bare hop count or `true`
 *   (forgeable by a client that reaches an instance directly);
 * - compose publishes only nginx's port, the instances only `expose`, and
 *   their TRUST_PROXY covers nginx's fixed address;
 * - Kubernetes: a NetworkPolicy selects the service's pods, admits their
 *   public port only from selected peers, and no rule is open to all.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseAddressList } from '../core/address-list.js'

type Obj = Record<string, any>
export interface Report { problem (p: string): void, ok (n: string): void }

/** Every `TRUST_PROXY` value written in deploy/ (env files, compose, ConfigMaps), by file. */
export function trustProxyValues (deployDir: string): Array<{ file: string, value: string }> {
  const found: Array<{ file: string, value: string }> = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) { walk(path); continue }
      if (!/\.(ya?ml|example|env|conf)$|^\.env$/.test(name)) continue
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        const m = /^\s*(?:-\s*)?TRUST_PROXY\s*[:=]\s*(.*)$/.exec(line)
        if (m !== null) found.push({ file: relative(join(deployDir, '..'), path), value: m[1]!.replace(/\s+#.*$/, '').trim().replace(/^["']|["']$/g, '') })
      }
    }
  }
  walk(deployDir)
  return found
}

export function checkTrustProxy (deployDir: string, r: Report): void {
  const values = trustProxyValues(deployDir)
  if (values.length === 0) r.problem('deploy/: TRUST_PROXY is set nowhere: name the proxies\' addresses (compose: nginx\'s address; Kubernetes: the ingress controller\'s pod range)')
  for (const { file, value } of values) {
    if (/^\d+$/.test(value) || value === 'true') r.problem(`${file}: TRUST_PROXY=${value} trusts X-Forwarded-For from any peer that many hops away: a client that reaches an instance directly can forge its address; name the proxies' addresses or CIDRs instead`)
  }
  if (values.length > 0) r.ok(`deploy/: TRUST_PROXY names addresses, never a hop count (${values.map((v) => `${v.file}: ${v.value}`).join('; ')})`)
}

/** The compose file as parsed (aliases expanded): only nginx publishes, and the instances trust nginx's address. */
export function checkComposeNetwork (compose: Obj, r: Report, file = 'docker-compose.yml'): void {
  const services = Object.entries(compose.services as Record<string, Obj>)
  const proxies = services.filter(([, s]) => String(s.image ?? '').startsWith('nginx'))
  if (proxies.length !== 1) { r.problem(`compose: expected one nginx service, found ${proxies.length}`); return }
  const [proxyName, proxy] = proxies[0]!
  for (const [name, svc] of services) {
    if (name !== proxyName && svc.ports !== undefined) r.problem(`compose service ${name}: publishes ports ${JSON.stringify(svc.ports)}; only nginx (${proxyName}) may publish a port, the others use expose`)
  }
  if (proxy.ports === undefined) r.problem(`compose service ${proxyName}: publishes no port`)
  const address = Object.values((proxy.networks ?? {}) as Record<string, Obj | null>).map((n) => n?.ipv4_address).find((a) => typeof a === 'string') as string | undefined
  if (address === undefined) { r.problem(`compose service ${proxyName}: give it a fixed ipv4_address on the network, for TRUST_PROXY to name`); return }
  const apis = services.filter(([, s]) => String(s.image ?? '').startsWith('policia-records') && s.restart !== 'no')
  for (const [name, svc] of apis) {
    const trust = String((svc.environment as Obj | undefined)?.TRUST_PROXY ?? '')
    const { list, bad } = parseAddressList(trust)
    if (trust === '' || bad.length > 0 || !list.includes(address)) r.problem(`compose service ${name}: TRUST_PROXY "${trust}" must name ${proxyName}'s address ${address}`)
    if (svc.expose === undefined) r.problem(`compose service ${name}: list its port under expose (it is reachable on the compose network only)`)
  }
  r.ok(`deploy/${file}: only ${proxyName} publishes a port; ${apis.map(([n]) => n).join(', ')} trust X-Forwarded-For from ${address} only`)
}

/** The Kubernetes objects: a NetworkPolicy that selects the pods and admits their public port only from selected peers. */
export function checkNetworkPolicy (objects: readonly Obj[], podLabels: Obj, port: string, r: Report): void {
  const selects = (p: Obj): boolean => Object.entries((p.spec?.podSelector?.matchLabels ?? {}) as Obj).every(([k, v]) => podLabels[k] === v) && (p.spec?.podSelector?.matchExpressions ?? []).length === 0
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy' && selects(o))
  if (policies.length === 0) { r.problem(`deploy/k8s: no NetworkPolicy selects the service's pods (${JSON.stringify(podLabels)}): add one that admits port ${port} only from the ingress controller`); return }
  for (const p of policies) {
    const where = `NetworkPolicy ${String(p.metadata?.name)}`
    const types = (p.spec.policyTypes ?? ['Ingress']) as string[]
    if (!types.includes('Ingress')) r.problem(`${where}: policyTypes must include Ingress`)
    const rules = (p.spec.ingress ?? []) as Obj[]
    for (const rule of rules) {
      const from = (rule.from ?? []) as Obj[]
      if (from.length === 0) r.problem(`${where}: an ingress rule without \`from\` admits every peer`)
      for (const peer of from) {
        if (peer.ipBlock === undefined && peer.namespaceSelector === undefined && peer.podSelector === undefined) r.problem(`${where}: an empty peer admits every pod`)
        if (peer.namespaceSelector !== undefined && Object.keys(peer.namespaceSelector).length === 0 && peer.podSelector === undefined) r.problem(`${where}: namespaceSelector {} admits every namespace; select the ingress controller's`)
      }
      if (rule.ports === undefined) r.problem(`${where}: an ingress rule without ports admits every port of the pods`)
    }
    if (!rules.some((rule) => ((rule.ports ?? []) as Obj[]).some((q) => q.port === port || q.port === 3000))) r.problem(`${where}: no rule admits the service's port ${port}`)
  }
  r.ok(`deploy/k8s: ${policies.map((p) => `NetworkPolicy ${String(p.metadata?.name)}`).join(', ')} selects the service's pods; port ${port} only from the peers it names`)
}
