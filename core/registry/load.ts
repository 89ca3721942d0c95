/**
 * Reads modules.yaml, checks it against the TypeBox schema of the file and
 * against the rules no schema can express (refs exist, prefixes unique …),
 * and returns a frozen Registry. Any mistake throws a ConfigError naming the
 * file, the line and the key, with a closest-name hint for misspellings.
 */
import { readFileSync } from 'node:fs'
import { LineCounter, parseDocument } from 'yaml'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { ConfigError } from '../errors.js'
import { RegistryFileSchema, FieldSchema, ItemFieldSchema, ModuleSchema, PrintedCopySchema, RetentionSchema, RoleSchema, SystemFieldSchema, SystemFieldsSchema, TransitionSchema, type RegistryFile } from './schema.js'
import { buildRegistry, RegistryProblem } from './build.js'
import { lineOf } from './locate.js'
import { hint } from './suggest.js'
import type { Registry } from './types.js'

const checker = TypeCompiler.Compile(RegistryFileSchema)

/** Keys an object may hold at a given depth of the file, for hints. */
function allowedKeys (path: string[]): string[] {
  const keysOf = (s: { properties: Record<string, unknown> }): string[] => Object.keys(s.properties)
  if (path.length === 0) return keysOf(RegistryFileSchema)
  if (path[0] === 'roles' && path.length === 2) return keysOf(RoleSchema)
  if (path[0] === 'modules') {
    if (path.length === 2) return keysOf(ModuleSchema)
    if (path[2] === 'fields' && path.length === 4) return keysOf(FieldSchema)
    if (path[2] === 'fields' && path[4] === 'items' && path.length === 6) return keysOf(ItemFieldSchema)
    if (path[2] === 'transitions' && path.length === 4) return keysOf(TransitionSchema)
    if (path[2] === 'documento' && path.length === 3) return keysOf(PrintedCopySchema)
    if (path[2] === 'conservacion' && path.length === 3) return keysOf(RetentionSchema)
    if (path[2] === 'system_fields') return path.length === 3 ? keysOf(SystemFieldsSchema) : path.length === 4 ? keysOf(SystemFieldSchema) : []
  }
  return []
}

function describe (error: ValueError): { path: string[], text: string } {
  const path = error.path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  const key = path.at(-1) ?? ''
  switch (error.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return { path, text: `unknown key "${key}"${hint(key, allowedKeys(path.slice(0, -1)))}` }
    case ValueErrorType.ObjectRequiredProperty:
      return { path, text: `missing required key "${key}"` }
    case ValueErrorType.Union:
    case ValueErrorType.Literal: {
      const schema = error.schema as { anyOf?: Array<{ const?: unknown }>, const?: unknown }
      const options = schema.anyOf?.map((s) => s.const).filter((c) => c !== undefined) ?? [schema.const]
      const value = typeof error.value === 'string' ? error.value : JSON.stringify(error.value)
      if (options.length > 0 && options.every((o) => typeof o === 'string' || typeof o === 'number')) {
        return { path, text: `"${value}" is not one of ${options.join(', ')}${hint(String(value), options.map(String))}` }
      }
      return { path, text: `invalid value ${JSON.stringify(error.value)}` }
    }
    default:
      return { path, text: `${error.message.toLowerCase()} (got ${JSON.stringify(error.value)})` }
  }
}

/** Parses and validates registry text; `file` only names it in messages. */
export function parseRegistry (text: string, file: string): Registry {
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false })
  const where = (path: ReadonlyArray<string | number>): string => {
    const line = lineOf(doc, lines, path)
    return line === undefined ? file : `${file}:${line}`
  }
  if (doc.errors.length > 0) {
    // Reported like a schema error (below), with the column too: `file:line:column: …`.
    const e = doc.errors[0]!
    // Past the indentation a position may start with, to the character at fault.
    let at = e.pos[0]
    while (text[at] === ' ') at++
    const { line, col } = lines.linePos(at)
    throw new ConfigError(`${file} is not valid:\n  ${file}:${line}:${col}: YAML syntax error: ${e.message.split('\n')[0]}`)
  }
  const data = doc.toJS({ maxAliasCount: 1000 }) as unknown
  if (data === null || typeof data !== 'object') {
    throw new ConfigError(`${file}: the file must hold a mapping with the keys version, roles and modules`)
  }
  const errors = [...checker.Errors(data)]
  if (errors.length > 0) {
    // Unknown keys first (the likeliest typo), then the deepest paths; drop
    // "undefined is not …" echoes of a key already reported missing.
    const missing = new Set(errors.filter((e) => e.type === ValueErrorType.ObjectRequiredProperty).map((e) => e.path))
    const kept = errors.filter((e) => e.type === ValueErrorType.ObjectRequiredProperty || e.value !== undefined || !missing.has(e.path))
    const rank = (e: ValueError): number => e.type === ValueErrorType.ObjectAdditionalProperties ? 0 : 1
    const ranked = kept.sort((a, b) => rank(a) - rank(b) || b.path.length - a.path.length).map(describe)
    const seen = new Set<string>()
    const shown = ranked.filter(({ path, text }) => !seen.has(path + text) && seen.add(path + text)).slice(0, 5).map(({ path, text }) => `${where(path)}: ${path.join('.') || '(top level)'}: ${text}`)
    throw new ConfigError(`${file} is not valid:\n  ${shown.join('\n  ')}`)
  }
  try {
    return buildRegistry(data as RegistryFile, file)
  } catch (err) {
    if (err instanceof RegistryProblem) {
      throw new ConfigError(`${file} is not valid:\n  ${where(err.path)}: ${err.path.join('.')}: ${err.message}`)
    }
    throw err
  }
}

export function loadRegistry (file: string): Registry {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError(`cannot read the module registry ${file}: ${(err as Error).message}`)
  }
  return parseRegistry(text, file)
}
