/**
 * The rows of an import's body (docs/user-guide.md "Import (importar)"),
 * each as the JSON body a POST would send, with its row number and the
 * problems found before validation. CSV: the export's dialect
 * (csv-dialect.ts); row 1 is the header, so a row's number is the one a
 * spreadsheet shows. NDJSON: one JSON object per line, numbered by line;
 * blank lines are skipped. Columns and keys starting with `_` (what an
 * export adds: `_id`, `_created`, `_version`, `_restringidos` …) are
 * ignored, as in a POST.
 */
import { StringDecoder } from 'node:string_decoder'
import sjson from 'secure-json-parse'
import type { ErrorDetail } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import { cellValue, csvRecords, type Separator } from './csv-dialect.js'

export type ImportFormat = 'csv' | 'ndjson'

export interface SourceRow {
  readonly fila: number
  readonly body: Record<string, unknown>
  /** Problems of its cells or line (then the fields they name are left out of `body`). */
  readonly problems: ErrorDetail[]
  /** The CSV header's own problems (unknown or repeated columns): no record. */
  readonly header?: boolean
}

export interface ImportSourceOptions {
  readonly format: ImportFormat
  readonly separador?: Separator
}

export function importSource (mod: ModuleDef, input: AsyncIterable<Buffer | string>, opts: ImportSourceOptions): AsyncGenerator<SourceRow> {
  return opts.format === 'csv' ? csvRows(mod, input, opts.separador) : ndjsonRows(input)
}

async function * csvRows (mod: ModuleDef, input: AsyncIterable<Buffer | string>, separador?: Separator): AsyncGenerator<SourceRow> {
  let header: string[] | undefined
  let fila = 0
  for await (const cells of csvRecords(input, separador)) {
    fila++
    if (header === undefined) {
      header = cells
      const problems = headerProblems(mod, header)
      if (problems.length > 0) yield { fila, body: {}, problems, header: true }
      continue
    }
    const body: Record<string, unknown> = {}
    const problems: ErrorDetail[] = []
    if (cells.length !== header.length) problems.push({ campo: '', mensaje: `tiene ${cells.length} columnas y la cabecera ${header.length}` })
    for (const [i, name] of header.entries()) {
      const cell = cells[i]
      if (cell === undefined || cell === '' || name.startsWith('_')) continue
      const f = mod.fieldMap.get(name)
      if (f === undefined) continue
      const converted = cellValue(f, cell)
      if ('problem' in converted) problems.push(converted.problem)
      else body[name] = converted.value
    }
    yield { fila, body, problems }
  }
}

/** Columns that are no field of the module, and repeated ones: reported once, on row 1. */
function headerProblems (mod: ModuleDef, header: readonly string[]): ErrorDetail[] {
  const problems: ErrorDetail[] = []
  const seen = new Set<string>()
  for (const name of header) {
    if (name.startsWith('_')) continue
    if (!mod.fieldMap.has(name)) problems.push({ campo: name, mensaje: 'no es un campo de este módulo' })
    else if (seen.has(name)) problems.push({ campo: name, mensaje: 'columna repetida' })
    seen.add(name)
  }
  return problems
}

/** The lines of a body, as they arrive (a stream's errors surface here). */
async function * linesOf (input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8')
  let rest = ''
  for await (const chunk of input) {
    const lines = (rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk))).split('\n')
    rest = lines.pop()!
    yield * lines
  }
  rest += decoder.end()
  if (rest !== '') yield rest
}

async function * ndjsonRows (input: AsyncIterable<Buffer | string>): AsyncGenerator<SourceRow> {
  let fila = 0
  for await (const raw of linesOf(input)) {
    fila++
    const line = (fila === 1 ? raw.replace(/^\uFEFF/, '') : raw).replace(/\r$/, '')
    if (line.trim() === '') continue
    let value: unknown
    try {
      value = sjson.parse(line, undefined, { protoAction: 'error', constructorAction: 'error' })
    } catch {
      yield { fila, body: {}, problems: [{ campo: '', mensaje: 'no es JSON válido' }] }
      continue
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { fila, body: {}, problems: [{ campo: '', mensaje: 'debe ser un objeto JSON' }] }
      continue
    }
    yield { fila, body: value as Record<string, unknown>, problems: [] }
  }
}
