/**
 * What modules.yaml leaves without a label (docs/administrator-guide.md
 * "Labels"): modules, fields, structured-array sub-fields, states and enum
 * values, each with the line it is declared on. Where a label is missing a
 * person reads the name; `npm run check` lists these as warnings, never a
 * refusal. Also a field label that is another field's name or label: a CSV
 * header naming it is refused as ambiguous (records/import-source.ts).
 * Reads a file the registry already accepted (core/registry/load.ts).
 */
import { LineCounter, parseDocument } from 'yaml'
import type { FieldFile, ItemFieldFile, ModuleFile, RegistryFile } from './schema.js'
import { lineOf } from './locate.js'

export interface LabelWarning {
  /** `file:line`. */
  readonly where: string
  /** The key path, `modules.denuncias.fields.tipo`. */
  readonly path: string
  /** What lacks a label (or shares one), in English for the operator. */
  readonly what: string
}

type Path = Array<string | number>

function fieldGaps (f: FieldFile | ItemFieldFile, path: Path, kind: string, isState: boolean): Array<{ path: Path, what: string }> {
  const name = String(path.at(-1))
  const out = f.label === undefined ? [{ path, what: `${kind} "${name}" has no label (a person reads "${name}")` }] : []
  for (const [i, value] of (f.enum ?? []).entries()) {
    if (f.enum_labels?.[value] === undefined) out.push({ path: [...path, 'enum', i], what: `${isState ? 'state' : 'enum value'} "${value}" of ${name} has no label in enum_labels (a person reads "${value}")` })
  }
  return out
}

function moduleGaps (name: string, m: ModuleFile): Array<{ path: Path, what: string }> {
  const path: Path = ['modules', name]
  const out = m.label === undefined ? [{ path, what: `module "${name}" has no label (a person reads "${name}")` }] : []
  for (const [fname, f] of Object.entries(m.fields)) {
    const fpath = [...path, 'fields', fname]
    out.push(...fieldGaps(f, fpath, 'field', fname === m.state_field))
    for (const [sname, sub] of Object.entries(f.items ?? {})) out.push(...fieldGaps(sub, [...fpath, 'items', sname], 'sub-field', false))
  }
  return [...out, ...sharedLabels(m.fields, path)]
}

/** Field labels that are another field's name or label: a CSV header cannot tell them apart. */
function sharedLabels (fields: Record<string, FieldFile>, path: Path): Array<{ path: Path, what: string }> {
  const owner = new Map(Object.keys(fields).map((n) => [n, n]))
  const out: Array<{ path: Path, what: string }> = []
  for (const [name, f] of Object.entries(fields)) {
    if (f.label === undefined || f.label === name) continue
    const other = owner.get(f.label)
    if (other === undefined) { owner.set(f.label, name); continue }
    out.push({ path: [...path, 'fields', name, 'label'], what: `the label "${f.label}" of ${name} is also ${other === f.label ? 'the name' : 'the label'} of ${other}: a CSV header naming it is refused as ambiguous; give each field its own label` })
  }
  return out
}

/** Every missing or shared label of a valid registry file's text, module by module. */
export function labelWarnings (text: string, file: string): LabelWarning[] {
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines })
  const data = doc.toJS({ maxAliasCount: 1000 }) as RegistryFile
  return Object.entries(data.modules).flatMap(([name, m]) => moduleGaps(name, m)).map(({ path, what }) => {
    const line = lineOf(doc, lines, path)
    return { where: line === undefined ? file : `${file}:${line}`, path: path.join('.'), what }
  })
}
