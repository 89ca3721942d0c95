/** `npm run diagrams`: rewrites the state diagrams in README.md from modules.yaml. */
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { loadRegistry } from '../core/registry/load.js'
import { replaceSection, stateSection } from '../core/state-diagram.js'

const registry = loadRegistry(resolve(process.env.MODULES_FILE ?? 'modules.yaml'))
const readme = resolve('README.md')
const updated = replaceSection(readFileSync(readme, 'utf8'), stateSection(registry))
if (updated === undefined) {
  process.stderr.write('README.md has no state-diagram markers\n')
  process.exit(1)
}
writeFileSync(readme, updated)
process.stdout.write('README.md: state diagrams updated\n')
