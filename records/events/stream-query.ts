/**
 * What a live stream asks for (docs/user-guide.md "Events: the live stream
 * (eventos)"): `modulos` (default: every module the caller may `ver`),
 * `tipos`, and for a stream of one module the list's filters, evaluated
 * over each event's stored version (records/events/row-filter.ts). Pure;
 * anything else is a clear 400 (an unknown module or tipo, a list-only
 * parameter, a filter only the database can answer), and a module the
 * caller may not see a 403, before the stream starts.
 */
import { AppError, invalid } from '../../core/errors.js'
import type { FieldCipher } from '../../core/crypto.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { apiHint } from '../../core/registry/suggest.js'
import { parseListQuery } from '../list-query.js'
import { EVENT_KINDS, type FeedEntry } from './feed.js'
import { NotOnStream, rowFilter, type RowPredicate } from './row-filter.js'

type RawQuery = Record<string, string | string[] | undefined>

export interface StreamQuery {
  /** The modules streamed, in the order asked (or the registry's). */
  readonly modulos: readonly ModuleDef[]
  /** Full tipos (`denuncias.creado`) streamed; undefined: every one. */
  readonly tipos?: ReadonlySet<string>
  /** The list's filters of a one-module stream, as sent; undefined: none. */
  readonly filtro?: RawQuery
}

const KINDS: readonly string[] = Object.values(EVENT_KINDS)
/** A list's parameters that are no filter of records: meaningless on a stream (a stream has no page, order or relevance). */
const LIST_ONLY = ['limit', 'offset', 'sort', 'q', 'incluir_eliminados', 'campos', 'expandir']
export const STREAM_PARAMETERS = ['modulos', 'tipos'] as const

/** The `tipo` of an entry (`denuncias.creado`). */
export function tipoOf (e: FeedEntry): string {
  return `${e.modulo}.${EVENT_KINDS[e.accion]}`
}

/** A comma-separated list, once or repeated. */
function names (key: string, raw: string | string[]): string[] {
  const list = [raw].flat().flatMap((v) => v.split(',')).map((v) => v.trim())
  if (list.length === 0 || list.some((v) => v === '')) throw invalid(key, 'lista separada por comas sin elementos vacíos')
  return [...new Set(list)]
}

/**
 * The stream `query` asks for. `modules`: every module of the registry;
 * `sees(mod)`: whether the caller holds `ver` on it.
 */
export function parseStreamQuery (query: RawQuery, modules: readonly ModuleDef[], sees: (mod: ModuleDef) => boolean): StreamQuery {
  let modulos: ModuleDef[]
  if (query.modulos === undefined) {
    modulos = modules.filter(sees)
    if (modulos.length === 0) throw new AppError('SIN_PERMISOS')
  } else {
    const byName = new Map(modules.map((m) => [m.name, m]))
    modulos = names('modulos', query.modulos).map((n) => byName.get(n) ?? (() => { throw invalid('modulos', `módulo desconocido "${n}"${apiHint(n, [...byName.keys()])}`) })())
    if (!modulos.every(sees)) throw new AppError('SIN_PERMISOS')
  }
  const tipos = query.tipos === undefined ? undefined : parseTipos(query.tipos, modulos)
  const filters = Object.entries(query).filter(([k, v]) => v !== undefined && !(STREAM_PARAMETERS as readonly string[]).includes(k))
  for (const [key] of filters) {
    if (LIST_ONLY.includes(key)) throw invalid(key, 'no se aplica a un flujo de eventos, que no tiene páginas ni orden y trae también las eliminaciones')
  }
  if (filters.length > 0 && modulos.length !== 1) {
    throw invalid(filters[0]![0], 'los filtros del listado se aplican solo a un flujo de un único módulo: indique modulos=<módulo>')
  }
  return {
    modulos,
    ...(tipos !== undefined && { tipos }),
    ...(filters.length > 0 && { filtro: Object.fromEntries(filters) }),
  }
}

/** `creado` (every module of the stream) or `denuncias.creado`. */
function parseTipos (raw: string | string[], modulos: readonly ModuleDef[]): ReadonlySet<string> {
  const out = new Set<string>()
  const full = modulos.flatMap((m) => KINDS.map((k) => `${m.name}.${k}`))
  for (const t of names('tipos', raw)) {
    if (KINDS.includes(t)) for (const m of modulos) out.add(`${m.name}.${t}`)
    else if (full.includes(t)) out.add(t)
    else throw invalid('tipos', `tipo desconocido "${t}" en este flujo${apiHint(t, [...KINDS, ...full])}; use ${KINDS.join(', ')} o <módulo>.<tipo> de un módulo del flujo`)
  }
  return out
}

/**
 * The list's filters of `mod` as a predicate over a version's stored row.
 * Each parameter is read as the list reads it (records/list-query.ts);
 * refused with a 400 naming it: a filter on an encrypted field (a standing
 * probe for a person that the read log could not count, docs/decisions.md)
 * and a search condition only the database can answer (`q`, `contiene` on
 * text, `vacio` on a text or array field).
 */
export function streamFilter (mod: ModuleDef, filtro: RawQuery, timeZone: string, cipher: FieldCipher): RowPredicate {
  // Deleted records too: the stream carries deletions, and the filter is about the record's values.
  const parse = (q: RawQuery): ReturnType<typeof parseListQuery> => parseListQuery(mod, { ...q, incluir_eliminados: 'true' }, timeZone, cipher)
  for (const [key, raw] of Object.entries(filtro)) {
    const q = parse({ [key]: raw })
    if (q.filtersEncrypted) throw invalid(key, 'un flujo de eventos no admite filtros por campos cifrados')
    let evaluable = q.search.length === 0
    try { if (evaluable) rowFilter(q.where) } catch (err) {
      if (!(err instanceof NotOnStream)) throw err
      evaluable = false
    }
    if (!evaluable) throw invalid(key, `un flujo de eventos no puede aplicar este filtro (una búsqueda de texto que solo responde la base de datos); use el listado (GET /${mod.path}) para esta búsqueda`)
  }
  return rowFilter(parse(filtro).where)
}
