/**
 * Dependencies point one way (docs/architecture.md): routes, generated
 * routes and plugins → records → db, stores, core. Read from
 * the import statements of every source file, so a new import that breaks
 * the direction fails here.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../..')
const LAYERS = ['bin', 'core', 'db', 'generate', 'http', 'plugins', 'records', 'routes', 'stores'] as const
type Layer = typeof LAYERS[number] | 'app.ts'

/** What each layer may import from the project (besides itself). */
const ALLOWED: Record<string, readonly Layer[]> = {
  core: [],
  stores: ['core'],
  db: ['core'],
  records: ['core', 'db', 'stores'],
  http: ['core', 'stores'],
  generate: ['core', 'http', 'records', 'db'],
  routes: ['core', 'http', 'records', 'db', 'stores'],
  plugins: ['core', 'http', 'records', 'db', 'stores', 'generate', 'routes'],
  // generate: an import's row validator (bin/import.ts); bin sits above app.ts, which imports it anyway.
  bin: ['core', 'db', 'records', 'stores', 'http', 'generate', 'app.ts'],
}
/** What only db/ may import: the ORM and the drivers below it. */
const DATABASE_PACKAGES = ['@mikro-orm/', 'knex', 'pg', 'pg-protocol', 'pg-cursor', '@electric-sql/']
/** SQL in a string or template literal: a statement's first words. */
const SQL_TEXT = /['"`]\s*(?:select\s[\s\S]*?\sfrom\s|insert\s+into\s|update\s+"|delete\s+from\s|with\s+\w+\s+as\s*\()/i
/** Layers that must not know HTTP at all. */
const NO_FASTIFY = ['core', 'stores', 'db', 'records']

function filesOf (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? filesOf(p) : p.endsWith('.ts') ? [p] : []
  })
}

function importsOf (file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? m[2]!)
}

function layerOf (abs: string): Layer | undefined {
  const rel = relative(ROOT, abs)
  if (rel === 'app.ts') return 'app.ts'
  return LAYERS.find((l) => rel === l || rel.startsWith(`${l}/`))
}

describe('architecture', () => {
  const files = LAYERS.flatMap((l) => filesOf(join(ROOT, l)))

  it('finds the source files', () => {
    expect(files.length).toBeGreaterThan(40)
  })

  it.each(NO_FASTIFY)('nothing in %s/ imports Fastify', (layer) => {
    const offenders = filesOf(join(ROOT, layer)).flatMap((f) => importsOf(f)
      .filter((spec) => spec === 'fastify' || spec.startsWith('fastify-') || spec.startsWith('@fastify/'))
      .map((spec) => `${relative(ROOT, f)} imports ${spec}`))
    expect(offenders).toEqual([])
  })

  it('records/ runs no statement of its own: no ORM or driver import, no SQL text (db/ owns every statement)', () => {
    const offenders = filesOf(join(ROOT, 'records')).flatMap((f) => {
      const rel = relative(ROOT, f)
      const imports = importsOf(f).filter((spec) => DATABASE_PACKAGES.some((p) => p.endsWith('/') ? spec.startsWith(p) : spec === p || spec.startsWith(`${p}/`)))
        .map((spec) => `${rel} imports ${spec}`)
      const sql = readFileSync(f, 'utf8').split('\n').flatMap((line, i) => SQL_TEXT.test(line) ? [`${rel}:${i + 1} ${line.trim()}`] : [])
      return [...imports, ...sql]
    })
    expect(offenders).toEqual([])
  })

  it('each layer imports only the layers below it', () => {
    const offenders: string[] = []
    for (const f of files) {
      const from = layerOf(f)!
      for (const spec of importsOf(f).filter((s) => s.startsWith('.'))) {
        const to = layerOf(resolve(dirname(f), spec))
        if (to === undefined || to === from) continue
        if (!ALLOWED[from]!.includes(to)) offenders.push(`${relative(ROOT, f)} (${from}) imports ${spec} (${to})`)
      }
    }
    expect(offenders).toEqual([])
  })
})
