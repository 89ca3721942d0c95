/**
 * One module's records as one caller may see and change them: the service
 * every generated route goes through (ARCHITECTURE: "one service per
 * request built with the caller's access"). It decides every permission —
 * the action at all (403), row-level scope in every query it runs (404 for
 * rows outside `ver`, 403 for visible rows outside `editar`/`eliminar`),
 * decrypt-or-withhold per row (`descifrar` scope) and the read log — so a
 * list, its total, a GET, the history and the verification never disagree.
 * Returns API records; knows nothing of HTTP.
 */
import type { EntityManager } from '@mikro-orm/postgresql'
import type { AccessTable, Caller, Scope } from '../core/access.js'
import { AppError } from '../core/errors.js'
import type { FieldCipher } from '../core/crypto.js'
import type { Action, ModuleDef } from '../core/registry/types.js'
import { formatDateTime, nowSeconds } from '../core/time.js'
import type { Row } from '../db/module-entity.js'
import { verifyChain, type Verdict } from './chain.js'
import { sealInfo, versionsOf, type HistoryAction } from './history.js'
import { parseListQuery } from './list-query.js'
import { logReads } from './read-log.js'
import type { RecordService, RowGuard } from './record-service.js'
import { toApiRecord } from './record-view.js'
import { and, reaches, scopeCondition, ownCondition } from './scope.js'

export type ApiRecord = Record<string, unknown>

export interface ListPage {
  records: ApiRecord[]
  total: number
  limit: number
  offset: number
}

export interface HistoryEntryView {
  _version: number
  accion: HistoryAction
  usuario: string
  fecha: string
  _hash: string
  campos: string[]
  sello: number
  campos_sellados?: string[]
  registro: ApiRecord
}

/** What a request brings: its EntityManager, its caller, and the route (for the read log). */
export interface RequestContext {
  readonly em: EntityManager
  readonly caller: Caller
  /** Method and route pattern, e.g. `GET /personal/:id`. */
  readonly route: string
}

export interface ModuleRecordsDeps {
  readonly access: AccessTable
  readonly cipher: FieldCipher
  readonly timeZone: string
}

export type ModuleRecords = ReturnType<typeof moduleRecords>

export function moduleRecords (mod: ModuleDef, service: RecordService, deps: ModuleRecordsDeps, ctx: RequestContext) {
  const { em, caller } = ctx
  const scopes = new Map<Action, Scope>()
  const scope = (action: Action): Scope => {
    let s = scopes.get(action)
    if (s === undefined) { s = deps.access.scope(caller.rol, mod.name, action); scopes.set(action, s) }
    return s
  }
  const encrypted = mod.fields.filter((f) => f.encrypted).map((f) => f.name)
  /** Condition of the rows the caller may see. */
  const visible = (): ReturnType<typeof scopeCondition> => scopeCondition(scope('ver'), mod, caller)
  const guard = (action: 'editar' | 'eliminar'): RowGuard => {
    const v = visible()
    return { ...(v !== undefined && { visible: v }), allows: (row) => reaches(scope(action), mod, caller, row) }
  }

  /** 403 unless the caller holds the action on this module at all (checked before validation, SPEC S9). */
  function authorize (action: Action): void {
    if (scope(action) === 'none') throw new AppError('SIN_PERMISOS')
  }

  /**
   * API records of stored rows, each decrypted when the caller's
   * `descifrar` scope reaches `owner(row)` (the row itself, or for history
   * the record as it is now), else withheld. Decrypted values leave only
   * after the read is logged (SPEC S7).
   */
  async function views (rows: Row[], owner: (row: Row) => Row = (row) => row): Promise<ApiRecord[]> {
    const decrypt = encrypted.length > 0 && scope('descifrar') !== 'none'
    const out = rows.map((r) => toApiRecord(mod, r, { timeZone: deps.timeZone, cipher: deps.cipher, canDecrypt: decrypt && reaches(scope('descifrar'), mod, caller, owner(r)) }))
    if (decrypt) {
      const fecha = nowSeconds()
      const entries = out.flatMap((rec) => {
        const campos = encrypted.filter((name) => rec[name] !== null && rec[name] !== undefined)
        return campos.length === 0 ? [] : [{ usuario: caller.id, fecha, modulo: mod.name, registro: rec._id as string, campos, ruta: ctx.route }]
      })
      await logReads(em, entries)
    }
    return out
  }
  const view = async (row: Row): Promise<ApiRecord> => (await views([row]))[0]!

  async function list (query: Record<string, string | string[] | undefined>): Promise<ListPage> {
    authorize('ver')
    const q = parseListQuery(mod, query, deps.timeZone, deps.cipher)
    if (q.includeDeleted && scope('eliminar') === 'none') throw new AppError('SIN_PERMISOS')
    if (q.filtersEncrypted && scope('descifrar') === 'none') throw new AppError('SIN_PERMISOS')
    // A filter on an encrypted value only finds records whose value the caller may read.
    const decryptable = q.filtersEncrypted && scope('descifrar') === 'own' ? ownCondition(mod, caller) : undefined
    const { rows, total } = await service.list(em, and(q.where, visible(), decryptable), q)
    return { records: await views(rows), total, limit: q.limit, offset: q.offset }
  }

  async function get (id: string): Promise<ApiRecord> {
    authorize('ver')
    return view(await service.findLive(em, id, visible()))
  }

  async function create (body: Record<string, unknown>): Promise<ApiRecord> {
    authorize('crear')
    return view(await service.create(em, caller, body))
  }

  async function update (id: string, body: Record<string, unknown>, expectedVersion?: number): Promise<ApiRecord> {
    authorize('editar')
    return view(await service.update(em, caller, id, body, guard('editar'), expectedVersion))
  }

  async function remove (id: string, expectedVersion?: number): Promise<void> {
    authorize('eliminar')
    await service.remove(em, caller, id, guard('eliminar'), expectedVersion)
  }

  async function restore (id: string): Promise<ApiRecord> {
    authorize('eliminar')
    return view(await service.restore(em, caller, id, guard('eliminar')))
  }

  /** Every version of a record the caller may see, masked as the record is now (SPEC S7, S11). */
  async function history (id: string): Promise<HistoryEntryView[]> {
    authorize('ver')
    const live = await service.findAny(em, id, visible())
    const versions = await versionsOf(em, mod, live._id as string)
    const records = await views(versions.map((v) => v.datos), () => live)
    return versions.map((v, i) => ({
      _version: v.version,
      accion: v.accion,
      usuario: v.usuario,
      fecha: formatDateTime(new Date(v.fecha), deps.timeZone),
      _hash: v.hash,
      campos: v.campos,
      ...sealInfo(mod, v),
      registro: records[i]!,
    }))
  }

  async function verify (id: string): Promise<Verdict> {
    authorize('ver')
    const live = await service.findAny(em, id, visible())
    return verifyChain(em, mod, live, deps.cipher)
  }

  return { authorize, list, get, create, update, remove, restore, history, verify }
}
