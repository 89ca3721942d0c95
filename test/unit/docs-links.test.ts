/**
 * The docs hold together (issue 22): every relative link of the Markdown in
 * the repository root and docs/ points to a file that exists, and every
 * `#anchor` to a heading of its target (GitHub's slugs); every environment
 * variable core/config.ts reads is documented in docs/operator-guide.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../..')

function markdownFiles (): string[] {
  const inDir = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.md')).map((f) => join(dir, f)).filter((f) => statSync(f).isFile())
  return [...inDir(ROOT), ...(existsSync(join(ROOT, 'docs')) ? inDir(join(ROOT, 'docs')) : [])]
}

/** The lines outside fenced code blocks (``` or ~~~), with the line number of each. */
function proseLines (text: string): Array<[number, string]> {
  const out: Array<[number, string]> = []
  let fence: string | undefined
  text.split('\n').forEach((line, i) => {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (m !== null) {
      if (fence === undefined) fence = m[1]![0]
      else if (m[1]![0] === fence) fence = undefined
      return
    }
    if (fence === undefined) out.push([i + 1, line])
  })
  return out
}

/** GitHub's anchor for a heading's text: lower case, HTML and punctuation dropped (but '-' and '_'), spaces to '-'. */
function slug (heading: string): string {
  return heading.replace(/<[^>]+>/g, '').trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/ /g, '-')
}

/** Every anchor a Markdown text defines: its headings' slugs, a repeated one with -1, -2 …; and explicit `<a name|id="…">`. */
function anchorsOf (text: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, line] of proseLines(text)) {
    const h = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)
    if (h !== null) {
      const s = slug(h[1]!)
      const n = seen.get(s) ?? 0
      seen.set(s, n + 1)
      anchors.add(n === 0 ? s : `${s}-${n}`)
    }
    for (const a of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(a[1]!)
  }
  return anchors
}

/** The targets of inline links `[x](target)` and images outside code blocks and inline code. */
function linksOf (text: string): Array<{ line: number, target: string }> {
  const out: Array<{ line: number, target: string }> = []
  for (const [n, line] of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '``')
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: n, target: m[1]! })
  }
  return out
}

describe('slug', () => {
  it('follows GitHub', () => {
    expect(slug('Search (full text)')).toBe('search-full-text')
    expect(slug('`roles`')).toBe('roles')
    expect(slug('modules.yaml reference')).toBe('modulesyaml-reference')
    expect(slug('What `npm run deploy:check` validates, and what it does not')).toBe('what-npm-run-deploycheck-validates-and-what-it-does-not')
    expect(slug('Client address and TRUST_PROXY')).toBe('client-address-and-trust_proxy')
    expect(slug('Concurrency, delete and restore')).toBe('concurrency-delete-and-restore')
    expect(slug('Contraseña y sesión — año')).toBe('contraseña-y-sesión--año')
    expect([...anchorsOf('# A\n\n## A\n\n```\n# A\n```\n\n### A\n')]).toEqual(['a', 'a-1', 'a-2'])
  })
})

describe('the Markdown of the root and docs/', () => {
  const files = markdownFiles()
  const anchors = new Map<string, Set<string>>()
  const anchorsFor = (file: string): Set<string> => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(file, 'utf8')))
    return anchors.get(file)!
  }

  it('is there: the README and the guides', () => {
    const names = files.map((f) => relative(ROOT, f))
    for (const f of ['README.md', 'docs/user-guide.md', 'docs/administrator-guide.md', 'docs/operator-guide.md', 'docs/operations.md', 'docs/architecture.md', 'docs/decisions.md', 'docs/performance.md']) {
      expect(names).toContain(f)
    }
  })

  it('has no broken relative link or anchor', () => {
    const broken: string[] = []
    for (const file of files) {
      for (const { line, target } of linksOf(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto: …
        const [path = '', anchor] = target.split('#', 2) as [string, string | undefined]
        const dest = path === '' ? file : resolve(dirname(file), decodeURI(path))
        const where = `${relative(ROOT, file)}:${line} → ${target}`
        if (!existsSync(dest)) { broken.push(`${where} (no such file)`); continue }
        if (anchor === undefined || anchor === '') continue
        if (!dest.endsWith('.md') || statSync(dest).isDirectory()) { broken.push(`${where} (an anchor into a file that is not Markdown)`); continue }
        if (!anchorsFor(dest).has(decodeURIComponent(anchor))) broken.push(`${where} (no such heading)`)
      }
    }
    expect(broken).toEqual([])
  })

  it('documents in docs/operator-guide.md every environment variable core/config.ts reads', () => {
    const config = readFileSync(join(ROOT, 'core/config.ts'), 'utf8')
    const names = new Set([
      ...[...config.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!),
      ...[...config.matchAll(/'([A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{2,})'/g)].map((m) => m[1]!),
    ])
    expect(names.size).toBeGreaterThan(20)
    const guide = readFileSync(join(ROOT, 'docs/operator-guide.md'), 'utf8')
    expect([...names].filter((n) => !guide.includes(`\`${n}\``))).toEqual([])
  })
})
