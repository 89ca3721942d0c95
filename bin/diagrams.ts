/** `npm run diagrams`: rewrites the state diagrams in docs/administrator-guide.md from modules.yaml. */
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError } from '../core/errors.js'
import { loadRegistry } from '../core/registry/load.js'
import { replaceSection, stateSection } from '../core/state-diagram.js'

const HELP = `npm run diagrams [-- --help]

Rewrites the state diagrams (Mermaid) between the state-diagram markers of
docs/administrator-guide.md under the current directory from modules.yaml (or MODULES_FILE).
Exit status: 0 written; 1 modules.yaml is invalid or docs/administrator-guide.md has no markers.
`

try {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help === true) {
    process.stdout.write(HELP)
  } else {
    const registry = loadRegistry(resolve(process.env.MODULES_FILE ?? 'modules.yaml'))
    const guide = resolve('docs/administrator-guide.md')
    const updated = replaceSection(readFileSync(guide, 'utf8'), stateSection(registry))
    if (updated === undefined) throw new ConfigError(`${guide} has no state-diagram markers; run the command from the repository root`)
    writeFileSync(guide, updated)
    process.stdout.write(`${guide}: state diagrams updated\n`)
  }
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
}
