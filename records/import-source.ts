/**
 * The rows of an import's body (docs/user-guide.md "Import (importar)"),
 * each as the JSON body a POST would send, with its row number and the
 * problems found before validation. CSV: the export's dialect
 * (csv-dialect.ts); row 1 is the header, so a row's number is the one a
 * spreadsheet shows. NDJSON: one JSON object per line, numbered by line;
 * blank lines are skipped. Columns and keys starting with `_` (what an
 * export adds: `_id`, `_created`, `_version`, `_restringidos` …) are
 * ignored, as in a POST, and so are columns with an empty header (the
 * index pandas writes first by default, a spreadsheet's empty columns).
 * File fields keep their URL strings only (records/import-file-fields.ts).
 * A header cell names a field by its name or its
 * label (an export with `cabeceras=etiquetas`), as written; one that names
 * two fields is refused whole (400 on row 1). A header of more columns
 * than the module's fields and an export's system columns is refused whole
 * (400 naming the extra ones) before anything is built per column.
 */
import sjson from 'secure-json-parse'
import { AppError, type ErrorDetail } from '../core/errors.js'
import { jsonTextProblem, MAX_TEXT_DEPTH, MAX_TEXT_VALUES } from '../core/json-text.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'
import { SYSTEM_COLUMNS } from '../core/system-fields.js'
import { csvRecords, type Separator } from './csv-dialect.js'
import { cellValue } from './csv-cells.js'
import { SkippedFiles } from './import-file-fields.js'
import { importText, type ImportEncoding } from './import-text.js'

export type ImportFormat = 'csv' | 'ndjson'

export interface SourceRow {
  readonly fila: number
  readonly body: Record<string, unknown>
  /** Problems of its cells or line (then the fields they name are left out of `body`). */
  readonly problems: ErrorDetail[]
  /** The CSV header's own problems (unknown or repeated columns), or the notes on the file's columns: no record. */
  readonly header?: boolean
  /** What the import did besides the records, said on row 1 (file fields left out: records/import-file-fields.ts). */
  readonly notes?: ErrorDetail[]
}

export interface ImportSourceOptions {
  readonly format: ImportFormat
  readonly separador?: Separator
  /** Default UTF-8. */
  readonly encoding?: ImportEncoding
}

/** What an export writes besides the fields (records/export-stream.ts). */
const EXPORT_COLUMNS: ReadonlySet<string> = new Set([...SYSTEM_COLUMNS, '_restringidos'])
/** Extra columns a refusal names; the rest are counted. */
const NAMED = 5

export function importSource (mod: ModuleDef, input: AsyncIterable<Buffer | string>, opts: ImportSourceOptions): AsyncGenerator<SourceRow> {
  const text = importText(input, opts.encoding ?? 'utf-8')
  return opts.format === 'csv' ? csvRows(mod, text, opts.separador) : ndjsonRows(text)
}

/** A column no field is read from: a system column (`_id` …) or one with no name (pandas' index). */
const ignored = (name: string): boolean => name === '' || name.startsWith('_')

/** The fields a header cell may name: each field by its name and by its label (docs/user-guide.md "Import (importar)"). */
function headerNames (mod: ModuleDef): ReadonlyMap<string, readonly FieldDef[]> {
  const names = new Map<string, FieldDef[]>()
  for (const f of mod.fields) {
    for (const key of new Set([f.name, f.label])) names.set(key, [...(names.get(key) ?? []), f])
  }
  return names
}

/**
 * The field each header cell names (undefined: a system column or no
 * field); a cell naming two fields (one's name and another's label, or two
 * fields' label) is a 400 on row 1: no column may be read as the wrong field.
 */
function headerFields (mod: ModuleDef, header: readonly string[]): Array<FieldDef | undefined> {
  const names = headerNames(mod)
  return header.map((cell) => {
    if (ignored(cell)) return undefined
    const fields = names.get(cell) ?? []
    if (fields.length > 1) {
      throw new AppError('DATOS_INVALIDOS', [{ campo: 'fila 1', mensaje: `la columna "${cell.slice(0, 60)}" es ambigua: es el nombre o la etiqueta de los campos ${fields.map((f) => f.name).join(', ')}; use el nombre del campo` }])
    }
    return fields[0]
  })
}

/** A header wider than the module's fields and the export's columns: 400 naming a few of the columns too many. */
function checkWidth (mod: ModuleDef, header: readonly string[]): void {
  const most = mod.fields.length + EXPORT_COLUMNS.size
  if (header.length <= most) return
  const names = headerNames(mod)
  const seen = new Set<string>()
  const extra: string[] = []
  let count = 0
  for (const name of header) {
    const field = names.get(name)?.[0]?.name
    if ((field === undefined && !EXPORT_COLUMNS.has(name)) || seen.has(field ?? name)) {
      count++
      if (extra.length < NAMED) extra.push(name === '' ? '(vacía)' : name.slice(0, 60))
    }
    seen.add(field ?? name)
  }
  const more = count > extra.length ? ` y ${count - extra.length} más` : ''
  throw new AppError('DATOS_INVALIDOS', [{ campo: 'fila 1', mensaje: `la cabecera tiene ${header.length} columnas y el módulo admite como máximo ${most} (sus campos y las columnas de sistema de una exportación); sobran: ${extra.join(', ')}${more}` }])
}

async function * csvRows (mod: ModuleDef, input: AsyncIterable<string>, separador?: Separator): AsyncGenerator<SourceRow> {
  let header: string[] | undefined
  let fields: Array<FieldDef | undefined> = []
  let fila = 0
  let separator: Separator = separador ?? ','
  const files = new SkippedFiles()
  for await (const cells of csvRecords(input, separador, (found) => { separator = found })) {
    fila++
    if (header === undefined) {
      checkWidth(mod, cells)
      header = cells
      fields = headerFields(mod, header)
      const problems = headerProblems(header, fields)
      if (problems.length > 0) yield { fila, body: {}, problems, header: true }
      continue
    }
    const body: Record<string, unknown> = {}
    const problems: ErrorDetail[] = []
    if (cells.length !== header.length) problems.push({ campo: '', mensaje: `tiene ${cells.length} columnas y la cabecera ${header.length}` })
    for (const [i, f] of fields.entries()) {
      const cell = cells[i]
      if (cell === undefined || cell === '' || f === undefined) continue
      const converted = cellValue(f, cell, separator)
      if ('problem' in converted) problems.push(converted.problem)
      else if (f.type !== 'file') body[f.name] = converted.value
      else {
        const kept = files.keep(f, converted.value as unknown[])
        if (kept !== undefined) body[f.name] = kept
      }
    }
    yield { fila, body, problems }
  }
  const notes = files.notes(mod)
  if (notes.length > 0) yield { fila: 1, body: {}, problems: [], notes, header: true }
}

/** Columns that are no field of the module, and repeated ones (a field named twice, by its name or label): reported once, on row 1. */
function headerProblems (header: readonly string[], fields: ReadonlyArray<FieldDef | undefined>): ErrorDetail[] {
  const problems: ErrorDetail[] = []
  const seen = new Set<FieldDef>()
  for (const [i, name] of header.entries()) {
    if (ignored(name)) continue
    const f = fields[i]
    if (f === undefined) problems.push({ campo: name, mensaje: 'no es un campo de este módulo' })
    else if (seen.has(f)) problems.push({ campo: name, mensaje: 'columna repetida' })
    else seen.add(f)
  }
  return problems
}

/** The lines of a body's text, as they arrive (a stream's errors surface here). */
async function * linesOf (input: AsyncIterable<string>): AsyncGenerator<string> {
  let rest = ''
  for await (const text of input) {
    const lines = (rest + text).split('\n')
    rest = lines.pop()!
    yield * lines
  }
  if (rest !== '') yield rest
}

/** A line's JSON value, or why it has none (the limits of a POST's body, plugins/json-body.ts). */
function lineValue (line: string): { value: unknown } | { problem: string } {
  const problem = jsonTextProblem(line)
  if (problem?.kind === 'depth') return { problem: `admite como máximo ${MAX_TEXT_DEPTH} niveles de anidamiento` }
  if (problem?.kind === 'values') return { problem: `admite como máximo ${MAX_TEXT_VALUES} valores en total` }
  try {
    const value: unknown = sjson.parse(line, undefined, { protoAction: 'error', constructorAction: 'error' })
    if (problem?.kind === 'number') return { problem: 'contiene un número fuera del rango admitido' }
    return { value }
  } catch {
    return { problem: 'no es JSON válido' }
  }
}

async function * ndjsonRows (input: AsyncIterable<string>): AsyncGenerator<SourceRow> {
  let fila = 0
  for await (const raw of linesOf(input)) {
    fila++
    const line = (fila === 1 ? raw.replace(/^\uFEFF/, '') : raw).replace(/\r$/, '')
    if (line.trim() === '') continue
    const parsed = lineValue(line)
    if ('problem' in parsed) {
      yield { fila, body: {}, problems: [{ campo: '', mensaje: parsed.problem }] }
      continue
    }
    const value = parsed.value
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { fila, body: {}, problems: [{ campo: '', mensaje: 'debe ser un objeto JSON' }] }
      continue
    }
    yield { fila, body: value as Record<string, unknown>, problems: [] }
  }
}
