/**
 * The Kubernetes objects of a folder of deploy/ (every document of every
 * .yaml file in it, not below it), and their check against the bundled
 * Kubernetes schemas (kubernetes-models). Kinds the bundle does not know
 * (an operator's custom resource, such as CloudNativePG's Cluster) are left
 * to the caller's own checks.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseAllDocuments } from 'yaml'
import type { Report } from './check-network.js'

type Obj = Record<string, any>
export interface K8sObject { readonly file: string, readonly obj: Obj }

export function loadObjects (dir: string, root: string, report: Report): K8sObject[] {
  const objects: K8sObject[] = []
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    const path = relative(root, join(dir, file))
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      if (doc.errors.length > 0) { report.problem(`${path}: ${doc.errors[0]!.message}`); continue }
      const obj = doc.toJS() as Obj | null
      if (obj !== null) objects.push({ file: path, obj })
    }
  }
  return objects
}

/** Each object against its schema; `custom` kinds (apiVersion/kind) are skipped here. */
export async function validateObjects (objects: readonly K8sObject[], report: Report, custom: ReadonlySet<string> = new Set()): Promise<void> {
  for (const { file, obj } of objects) {
    const where = `${file} ${String(obj.kind)} ${String(obj.metadata?.name)}`
    if (custom.has(`${String(obj.apiVersion)}/${String(obj.kind)}`)) continue
    try {
      const mod = await import(`kubernetes-models/${String(obj.apiVersion)}`) as Record<string, new (o: Obj) => { validate (): void }>
      const Model = mod[String(obj.kind)]
      if (Model === undefined) { report.problem(`${where}: unknown kind for ${String(obj.apiVersion)}`); continue }
      new Model(obj).validate()
      report.ok(`${where}: valid against the Kubernetes schema`)
    } catch (err) { report.problem(`${where}: ${(err as Error).message.split('\n').slice(0, 6).join(' ')}`) }
  }
}
