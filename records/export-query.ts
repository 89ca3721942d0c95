/**
 * An export's own query parameters (docs/user-guide.md "Export (exportar)"):
 * `formato` (csv, the default, or ndjson), `separador` (`,` or `;`, CSV
 * only) and `cabeceras` (`nombres`, the default, or `etiquetas`: the
 * fields' labels in the CSV header, CSV only). Everything else is the list's (filters, `o[N]` groups, `q`,
 * `sort`, `incluir_eliminados`) and goes to records/list-query.ts, except
 * `limit` and `offset`: an export holds every matching record, so asking
 * for a page is a 400 rather than a page silently ignored. `campos` is
 * the list's (records/fields-query.ts) but for `x.y`: an export expands no
 * reference, so `expandir` and dotted names are a 400 too. Pure.
 */
import { invalid } from '../core/errors.js'
import type { ModuleDef } from '../core/registry/types.js'
import { SEPARATORS, type Separator } from './csv-dialect.js'
import { nameList, selectionOf, type FieldSelection } from './fields-query.js'

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const
export type ExportFormat = typeof EXPORT_FORMATS[number]
/** What a CSV header names a field by: its name (what an API client reads) or its label (what a person reads). */
export const EXPORT_HEADERS = ['nombres', 'etiquetas'] as const
export type ExportHeaders = typeof EXPORT_HEADERS[number]

type RawQuery = Record<string, string | string[] | undefined>

export interface ExportQuery {
  format: ExportFormat
  separator: Separator
  headers: ExportHeaders
  /** `campos`, unparsed (exportFields reads it). */
  campos?: string | string[]
  /** The rest, for the list's parser. */
  list: RawQuery
}

function one (query: RawQuery, key: string): string | undefined {
  const v = query[key]
  if (Array.isArray(v)) throw invalid(key, 'no admite varios valores')
  return v
}

export function parseExportQuery (query: RawQuery): ExportQuery {
  const { formato: _f, separador: _s, cabeceras: _c, campos, expandir, ...list } = query
  if (expandir !== undefined) throw invalid('expandir', 'una exportación no expande referencias: cada referencia se exporta como su identificador')
  for (const key of ['limit', 'offset']) {
    if (list[key] !== undefined) throw invalid(key, 'una exportación contiene todos los registros: no admite limit ni offset')
  }
  const format = one(query, 'formato') ?? 'csv'
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw invalid('formato', `debe ser ${EXPORT_FORMATS.join(' o ')}`)
  const separator = one(query, 'separador')
  if (separator !== undefined) {
    if (format !== 'csv') throw invalid('separador', 'solo se aplica a formato=csv')
    if (!(SEPARATORS as readonly string[]).includes(separator)) throw invalid('separador', `debe ser ${SEPARATORS.map((s) => `"${s}"`).join(' o ')}`)
  }
  const headers = one(query, 'cabeceras')
  if (headers !== undefined) {
    if (format !== 'csv') throw invalid('cabeceras', 'solo se aplica a formato=csv')
    if (!(EXPORT_HEADERS as readonly string[]).includes(headers)) throw invalid('cabeceras', `debe ser ${EXPORT_HEADERS.join(' o ')}`)
  }
  return { format: format as ExportFormat, separator: (separator ?? ',') as Separator, headers: (headers ?? 'nombres') as ExportHeaders, ...(campos !== undefined && { campos }), list }
}

/** The fields `campos` names for an export of `mod` (undefined: every field); `x.y` is a 400, like `expandir`. */
export function exportFields (mod: ModuleDef, campos: string | string[] | undefined): FieldSelection | undefined {
  if (campos === undefined) return undefined
  const names = nameList('campos', campos)
  const dotted = names.find((n) => n.includes('.'))
  if (dotted !== undefined) throw invalid('campos', `"${dotted}": una exportación no incluye campos de registros relacionados; nombre solo campos de ${mod.path}`)
  return selectionOf(mod, names)
}

/**
 * The query as the read log keeps it (docs/operator-guide.md "Read log"):
 * each parameter in the order sent, the values of filters on encrypted
 * fields (a DNI searched for) replaced by `*`.
 */
export function loggedFilter (mod: ModuleDef, query: RawQuery): string {
  const out = new URLSearchParams()
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined) continue
    // `campo`, `campo[op]`, `o[1][campo]`, `o[1][campo][op]`: any part naming an encrypted field.
    const secret = key.split(/[[\]]+/).some((part) => mod.fieldMap.get(part)?.encrypted === true)
    for (const v of Array.isArray(raw) ? raw : [raw]) out.append(key, secret ? '*' : v)
  }
  return out.toString()
}
