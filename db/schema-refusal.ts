/**
 * The message of a refused schema change (start, `npm run check`,
 * `npm run migrate`): what changed, what it would cost, and the exact
 * statements with a command that runs them on this kind of database
 * (`npm run migrate -- --apply`, which also reaches the embedded one; psql
 * only reaches PostgreSQL).
 */
import { ConfigError } from '../core/errors.js'
import { renameStatements, type RenamedField } from './schema-renames.js'

export type DatabaseKind = 'postgresql' | 'embedded'

/** A statement as one shell word. */
function shellQuote (s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`
}

const lowerFirst = (text: string): string => text.replace(/^./, (c) => c.toLowerCase())

/** How an operator runs `statements` on this kind of database. */
export function howToRun (statements: readonly string[], kind: DatabaseKind): string {
  const apply = statements.map((s) => `--apply ${shellQuote(`${s};`)}`).join(' \\\n      ')
  const command = `    npm run migrate -- ${apply}\n`
  return kind === 'embedded'
    ? 'Stop the service first (Ctrl-C on npm start: the embedded database serves one process), back up DATA_DIR, then run\n' + command +
      'and start again.'
    : 'Back up the database, then run (in the image: node dist/bin/migrate.js --apply …; or psql "$DATABASE_URL" -c …)\n' + command +
      'and start again.'
}

function describeRename (r: RenamedField, kind: DatabaseKind): string {
  const head = `  ${r.module}: column "${r.from}" has no field any more and "${r.to}" is new — "${r.from}" renamed to "${r.to}"?`
  const held = r.sealedValues === 0
    ? 'No record or version holds a value under it, so renaming the column loses nothing.'
    : `${r.sealedValues} stored version(s) of records hold a value under "${r.from}", and a field's name is sealed in each record's _hash.`
  if (r.encrypted && r.sealedValues > 0) {
    return `${head}\n  ${held}\n` +
      `  It is an encrypted field: each value is encrypted bound to its record and field name (AES-GCM additional data), so after a rename in the database none of them would decrypt. Do not rename the column. To rename the field:\n` +
      `    1. restore "${r.from}" in modules.yaml (without required or unique) and declare "${r.to}" beside it (the start adds its column);\n` +
      `    2. copy each value through the API (PUT {"${r.to}": <value>, "${r.from}": null}, as a user with ${r.module}.descifrar): each copy is a new sealed, encrypted version;\n` +
      `    3. keep "${r.from}" declared: its past values stay in the history and keep verifying (a field's description can say it is retired).`
  }
  const warn = r.sealedValues === 0
    ? ''
    : `\n  After a rename in the database /verificar reports those records as broken (their seals name "${r.from}"). To keep them verifiable, restore "${r.from}", declare "${r.to}" beside it and copy the values through the API instead.`
  return `${head}\n  ${held}${warn}\n  To keep the old name, restore "${r.from}" in modules.yaml. To rename the column, ${lowerFirst(howToRun(renameStatements(r), kind))}`
}

/** The refusal of a plan the start may not apply, or undefined when it may. */
export function schemaRefusal (modulesFile: string, plan: { destructive: readonly string[], renames: readonly RenamedField[] }, kind: DatabaseKind): ConfigError | undefined {
  if (plan.renames.length > 0) {
    return new ConfigError(
      `${modulesFile} renames a field, which the start does not do by itself (it would add an empty column and lose the old one's data); refusing to start.\n` +
      plan.renames.map((r) => describeRename(r, kind)).join('\n') + '\n' +
      'If a field was removed rather than renamed, restore it; other changes (a removal, a type change) are reported by the next start, once the renames are settled.')
  }
  if (plan.destructive.length === 0) return undefined
  return new ConfigError(
    `${modulesFile} no longer matches the database in a way that would lose or rewrite data; refusing to start.\n` +
    'These statements would be needed:\n' + plan.destructive.map((s) => `  ${s};`).join('\n') + '\n' +
    'Either restore the previous declaration in modules.yaml, or ' + lowerFirst(howToRun(plan.destructive, kind)))
}
