/**
 * The check of `npm run deploy:check` on where webhooks are delivered
 * (docs/operator-guide.md "Webhooks"): off the instances that serve
 * requests (`WEBHOOK_DELIVERY` "false"), else an event's POST takes CPU
 * from requests, and on at least one other, else subscriptions wait.
 */
import type { Report } from './check-network.js'

type Obj = Record<string, any>
export interface Instance { readonly name: string, readonly serves: boolean, readonly deliver: unknown }

/** The compose file's instances (image policia-records, long-running); those nginx depends on serve. */
export function composeInstances (compose: Obj): Instance[] {
  const services = compose.services as Record<string, Obj>
  const proxied = Object.keys(services.proxy?.depends_on ?? {})
  return Object.entries(services)
    .filter(([, s]) => String(s.image ?? '').startsWith('policia-records') && s.restart !== 'no')
    .map(([name, s]) => ({ name: `compose service ${name}`, serves: proxied.includes(name), deliver: s.environment?.WEBHOOK_DELIVERY }))
}

/** The Deployments; the one the Service selects (`serving`) serves. */
export function kubernetesInstances (deployments: Obj[], serving: Obj): Instance[] {
  return deployments.map((d) => ({
    name: `Deployment ${String(d.metadata.name)}`,
    serves: d === serving,
    deliver: ((d.spec.template.spec.containers[0].env ?? []) as Obj[]).find((e) => e.name === 'WEBHOOK_DELIVERY')?.value,
  }))
}

export function checkDelivery (instances: Instance[], report: Report): void {
  for (const i of instances) if (i.serves && i.deliver !== 'false') report.problem(`${i.name} serves requests: set WEBHOOK_DELIVERY "false" on it and deliver from an instance of its own`)
  const delivering = instances.filter((i) => !i.serves && i.deliver !== 'false')
  if (delivering.length === 0) report.problem(`no instance delivers webhooks (${instances.map((i) => i.name).join(', ')}): add one with WEBHOOK_DELIVERY "true" outside the load balancer, or subscriptions wait`)
  else report.ok(`webhook delivery: off the serving instances, on ${delivering.map((i) => i.name).join(', ')}`)
}
