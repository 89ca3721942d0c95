/**
 * `npm run deploy:check` keeps webhook delivery off the instances that serve
 * requests, in the shipped compose file and Kubernetes set
 * (deploy/check-delivery.ts; docs/operator-guide.md "Webhooks").
 */
import { readFileSync } from 'node:fs'
import { parseAllDocuments } from 'yaml'
import { describe, expect, it } from 'vitest'
import { checkDelivery, composeInstances, kubernetesInstances, type Instance } from '../../deploy/check-delivery.js'

type Obj = Record<string, any>
const compose = (): Obj => parseAllDocuments(readFileSync('deploy/docker-compose.yml', 'utf8'), { merge: true })[0]!.toJS({ maxAliasCount: -1 }) as Obj
const deployments = (): Obj[] => ['deploy/k8s/deployment.yaml', 'deploy/k8s/webhook-delivery.yaml'].map((f) => parseAllDocuments(readFileSync(f, 'utf8'))[0]!.toJS() as Obj)

function problems (instances: Instance[]): string[] {
  const found: string[] = []
  checkDelivery(instances, { problem: (p) => found.push(p), ok: () => {} })
  return found
}

describe('the shipped sets', () => {
  it('compose: api1 and api2 serve without delivering, delivery delivers', () => {
    const instances = composeInstances(compose())
    expect(instances).toEqual([
      { name: 'compose service api1', serves: true, deliver: 'false' },
      { name: 'compose service api2', serves: true, deliver: 'false' },
      { name: 'compose service delivery', serves: false, deliver: 'true' },
    ])
    expect(problems(instances)).toEqual([])
  })

  it('Kubernetes: the Service\'s Deployment does not deliver, policia-records-delivery does', () => {
    const [serving, delivery] = deployments()
    expect(problems(kubernetesInstances([serving!, delivery!], serving!))).toEqual([])
  })
})

describe('refused', () => {
  it('a serving instance left delivering', () => {
    const c = compose()
    delete c.services.api2.environment.WEBHOOK_DELIVERY
    expect(problems(composeInstances(c))).toEqual(['compose service api2 serves requests: set WEBHOOK_DELIVERY "false" on it and deliver from an instance of its own'])
  })

  it('no instance delivering', () => {
    const [serving] = deployments()
    expect(problems(kubernetesInstances([serving!], serving!))[0]).toMatch(/^no instance delivers webhooks \(Deployment policia-records\)/)
  })
})
