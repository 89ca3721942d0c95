/**
 * RecordsService: one module's records as one caller may see and change
 * them, the service every generated route goes through (docs/architecture.md
 * "Glossary"). It decides every permission —
 * the action at all (403), row-level scope in every query it runs (404 for
 * rows outside `ver`, 403 for visible rows outside `editar`/`eliminar`),
 * decrypt-or-withhold per row (`descifrar` scope) and the read log — so a
 * list, its total, a GET, the history and the verification never disagree.
 * Reads and writes through the module's storage (storage/module-storage.ts),
 * handing it the caller's scope. Returns API records; knows nothing of HTTP.
 */
import type { Db } from '../db/statement.js'
import type { AccessTable, Caller, Scope } from '../core/access.js'
import { AppError, MOTIVOS } from '../core/errors.js'
import type { FieldCipher } from '../core/crypto.js'
import type { Action, ModuleDef } from '../core/registry/types.js'
import { formatDateTime, nowSeconds, today } from '../core/time.js'
import { entityName, type Row } from '../db/module-entity.js'
import type { ReadLogRow } from '../db/read-log-entity.js'
import { verifyChain, type Verdict } from './integrity/chain.js'
import type { Checkpoints } from './integrity/checkpoints.js'
import { sealInfo, versionsOf, type ErasureCertificate, type HistoryAction } from './history.js'
import { parseListQuery, type ListQuery } from './list-query.js'
import { importRecords, type ImportAnswer, type ImportRequest } from './import-rows.js'
import type { CallerRecords } from './caller-records.js'
import { expandRecords, parseReadShape, withoutReadShape, type ReadShape } from './expansion.js'
import { ownerColumns, type FieldSelection } from './fields-query.js'
import { printedSelection } from './documents/printed-record.js'
import { logReads } from './read-log.js'
import { columnTitles, CONTENT_TYPES, exportBody, recordColumns, type ExportAnswer } from './export-stream.js'
import { exportFields, loggedFilter, parseExportQuery } from './export-query.js'
import type { ChangeBody, ModuleStorage, RowGuard } from './storage/module-storage.js'
import { toApiRecord } from './record-view.js'
import { parseSummaryQuery } from './summary-query.js'
import { summarize, type Summary } from './summary.js'
import { holdsValue, recordsInDeclaredOrder, subFieldPaths } from './item-fields.js'
import { and, reaches, scopeCondition, ownCondition, type Where } from './scope.js'
import type { FeedEntry } from './events/feed.js'
import { eventOf, type FeedEvent } from './events/event-view.js'
import { streamFilter } from './events/stream-query.js'
import type { RowPredicate } from './events/row-filter.js'
import type { Readable } from 'node:stream'
import type { ByteRange, FileStore } from '../stores/files/contract.js'
import type { FileCipher } from '../core/file-cipher.js'
import { fileFields, filesOf, holdsFileObjects, resolveFileItems } from './files/file-items.js'
import { verifyFiles } from './files/verify-files.js'
import type { Custody } from './files/custody.js'
import type { FilesContext, FoundFile, Upload } from './files/record-files.js'
import type { OnAltered } from './files/sealed-read.js'
import { custodyAction, downloadAction, uploadAction, type FileGate } from './files/file-actions.js'
import { BLOCKED_COLUMN, valueColumn } from '../db/columns.js'

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
  /** An erasure's certificate (docs/decisions.md "Erasing personal data keeps the chain"). */
  supresion?: ErasureCertificate
  registro: ApiRecord
}

/** What a request brings: its Db, the one plain reads use, its caller, and the route (for the read log). */
export interface RequestContext {
  /** The request's own Db (writes, transactions, the read log). */
  readonly em: Db
  /**
   * For a GET by id and a list page, which are direct SQL outside any
   * transaction and need no unit of work: the app's Db serves,
   * so a request that only reads never forks one.
   */
  readonly reads: Db
  readonly caller: Caller
  /** Method and route pattern, e.g. `GET /personal/:id` (asked only when a read is logged). */
  route (): string
}

export interface RecordsServiceDeps {
  readonly access: AccessTable
  readonly cipher: FieldCipher
  readonly timeZone: string
  /** The global chain's checkpoints /verificar checks against (records/integrity/checkpoints.ts). */
  readonly checkpoints?: Checkpoints
  /** Where evidence files live (stores/files/), and the largest upload (FILE_MAX_BYTES). */
  readonly files?: { readonly store: FileStore, readonly cipher: FileCipher, readonly maxBytes: number, readonly onAltered?: OnAltered }
}

/** What the module's declaration says once, for every request. */
export interface ModulePlan {
  readonly mod: ModuleDef
  readonly storage: ModuleStorage
  /** Names of the encrypted fields, then paths of the encrypted sub-fields of structured arrays (`testigos.dni`). */
  readonly encrypted: readonly string[]
}

export function modulePlan (mod: ModuleDef, storage: ModuleStorage): ModulePlan {
  return { mod, storage, encrypted: [...mod.fields.filter((f) => f.encrypted).map((f) => f.name), ...mod.fields.flatMap(subFieldPaths)] }
}

const NOT_BLOCKED: Where = { [BLOCKED_COLUMN]: null }

function isBlocked (row: Row): boolean {
  return (row[BLOCKED_COLUMN] ?? null) !== null
}

const ACTION_INDEX: Record<Action, number> = { ver: 0, crear: 1, editar: 2, eliminar: 3, descifrar: 4, exportar: 5, importar: 6 }

/**
 * A class rather than closures: a request builds one object and no
 * functions, which the hot path notices.
 */
export class RecordsService {
  private readonly scopes: Array<Scope | undefined> = [undefined, undefined, undefined, undefined, undefined, undefined, undefined]

  constructor (private readonly plan: ModulePlan, private readonly deps: RecordsServiceDeps, private readonly ctx: RequestContext, private readonly others?: CallerRecords) {}

  private scope (action: Action): Scope {
    const i = ACTION_INDEX[action]
    return this.scopes[i] ??= this.deps.access.scope(this.ctx.caller.rol, this.plan.mod.name, action)
  }

  /**
   * Blocked records are out of the caller's sight unless their role reads
   * them (docs/user-guide.md "Personal data"): a list, a GET and every
   * other read or write then act as if they did not exist.
   */
  private hidesBlocked (): boolean {
    return this.plan.mod.personalData && !this.deps.access.readsBlocked(this.ctx.caller.rol)
  }

  /** Condition of the rows the caller may see. */
  private visible (): Where | undefined {
    const own = scopeCondition(this.scope('ver'), this.plan.mod, this.ctx.caller)
    return this.hidesBlocked() ? and(own, NOT_BLOCKED) : own
  }

  private guard (action: 'editar' | 'eliminar'): RowGuard {
    const v = this.visible()
    const scope = this.scope(action)
    const { mod } = this.plan
    const { caller } = this.ctx
    return { ...(v !== undefined && { visible: v }), allows: (row) => reaches(scope, mod, caller, row) }
  }

  /** 403 unless the caller holds the action on this module at all (checked before validation, docs/user-guide.md "Errors"). */
  authorize (action: Action): void {
    if (this.scope(action) === 'none') throw new AppError('SIN_PERMISOS')
  }

  /**
   * API records of stored rows, each decrypted when the caller's
   * `descifrar` scope reaches `owner(row)` (the row itself, or for history
   * the record as it is now), else withheld. Decrypted values leave only
   * after the read is logged (docs/operator-guide.md "Read log").
   */
  private async views (rows: Row[], owner?: Row, search?: ReadLogRow, fields?: FieldSelection, printed = false): Promise<ApiRecord[]> {
    const { mod } = this.plan
    const encrypted = fields?.encrypted ?? this.plan.encrypted
    const { caller } = this.ctx
    const descifrar = encrypted.length > 0 ? this.scope('descifrar') : 'none'
    const out = rows.map((r) => toApiRecord(mod, r, { timeZone: this.deps.timeZone, cipher: this.deps.cipher, canDecrypt: descifrar !== 'none' && reaches(descifrar, mod, caller, owner ?? r) }, fields))
    // Only those who read blocked records see them: they see since when, and each read is logged (`bloqueado`).
    const blocked = mod.personalData && owner === undefined ? rows.map(isBlocked) : undefined
    if (blocked?.includes(true) === true) {
      out.forEach((rec, i) => { if (blocked[i]!) rec._bloqueado = formatDateTime(new Date(rows[i]![BLOCKED_COLUMN] as Date | string), this.deps.timeZone) })
    }
    // A printed copy is logged whatever it holds (`documento`); another read when it shows decrypted values (`lectura`).
    if (descifrar !== 'none' || printed || blocked?.includes(true) === true) {
      const fecha = search?.fecha ?? nowSeconds()
      let ruta = search?.ruta
      const entries: ReadLogRow[] = search === undefined ? [] : [search]
      out.forEach((rec, i) => {
        const campos = descifrar === 'none' ? [] : encrypted.filter((name) => holdsValue(rec, name))
        const isBlockedRead = blocked?.[i] === true
        if (campos.length > 0 || printed || isBlockedRead) entries.push({ tipo: printed ? 'documento' : isBlockedRead ? 'bloqueado' : 'lectura', usuario: caller.id, fecha, modulo: mod.name, registro: rec._id as string, campos, ruta: ruta ??= this.ctx.route(), coincidencias: null })
      })
      // One insert for the search and the records it shows.
      await logReads(this.ctx.em, entries)
    }
    return out
  }

  private async view (row: Row): Promise<ApiRecord> {
    return (await this.views([row]))[0]!
  }

  /** A list's filters as the caller may apply them: the query, and its condition with the caller's scope (a list and a summary alike). */
  private filtered (query: Record<string, string | string[] | undefined>): { q: ListQuery, where: Where } {
    this.authorize('ver')
    const { mod } = this.plan
    const q = parseListQuery(mod, query, this.deps.timeZone, this.deps.cipher)
    if (q.includeDeleted && this.scope('eliminar') === 'none') throw new AppError('SIN_PERMISOS')
    if (q.filtersEncrypted && this.scope('descifrar') === 'none') throw new AppError('SIN_PERMISOS')
    // A filter on an encrypted value only finds records whose value the caller may read.
    const decryptable = q.filtersEncrypted && this.scope('descifrar') === 'own' ? ownCondition(mod, this.ctx.caller) : undefined
    return { q, where: and(q.where, this.visible(), decryptable) }
  }

  /**
   * Probing for a person leaves a trace (docs/operator-guide.md "Read log"): which encrypted fields
   * were searched and how many matched, never the value; also for an
   * empty page or no match. Every list, its total and every summary pass here.
   */
  private searchEntry (q: ListQuery, total: number): ReadLogRow | undefined {
    return q.encryptedFields.length === 0
      ? undefined
      : { tipo: 'busqueda', usuario: this.ctx.caller.id, fecha: nowSeconds(), modulo: this.plan.mod.name, registro: '', campos: q.encryptedFields, ruta: this.ctx.route(), coincidencias: total }
  }

  async list (query: Record<string, string | string[] | undefined>): Promise<ListPage> {
    const shape = this.shape(query.campos, query.expandir)
    const { q, where } = this.filtered(withoutReadShape(query))
    const { rows, total } = await this.plan.storage.list(this.ctx.reads, where, shape.fields === undefined ? q : { ...q, columns: this.columns(shape.fields) })
    const records = await this.views(rows, undefined, this.searchEntry(q, total), shape.fields)
    if (shape.expand.length > 0) await this.expand(records, shape)
    return { records, total, limit: q.limit, offset: q.offset }
  }

  /** Groups of the records a list with the same filters would show, counted and measured (docs/user-guide.md "Summaries (resumen)"). */
  async summary (query: Record<string, string | string[] | undefined>): Promise<Summary> {
    this.authorize('ver')
    const { summary, rest } = parseSummaryQuery(this.plan.mod, query)
    const { q, where } = this.filtered(rest)
    const out = await summarize(this.ctx.reads, entityName(this.plan.mod), where, q.search, summary, this.deps.timeZone)
    const search = this.searchEntry(q, out.total)
    if (search !== undefined) await logReads(this.ctx.em, [search])
    return out
  }

  /**
   * Every record of a list's query the caller may see and export, streamed
   * from one snapshot (docs/user-guide.md "Export (exportar)"; the body:
   * records/export-stream.ts). `exportar:propios` narrows to own records
   * too. When decrypted values may leave, the export itself is logged
   * first, and each batch's records as it goes (docs/operator-guide.md "Read log").
   */
  async export (query: Record<string, string | string[] | undefined>): Promise<ExportAnswer> {
    this.authorize('exportar')
    const { mod, storage } = this.plan
    const { caller } = this.ctx
    const e = parseExportQuery(query)
    const fields = exportFields(mod, e.campos)
    const encrypted = fields?.encrypted ?? this.plan.encrypted
    const filtered = this.filtered(e.list)
    const { q } = filtered
    const where = and(filtered.where, scopeCondition(this.scope('exportar'), mod, caller))
    const descifrar = encrypted.length > 0 ? this.scope('descifrar') : 'none'
    if (descifrar !== 'none') {
      await logReads(this.ctx.em, [{ tipo: 'exportar', usuario: caller.id, fecha: nowSeconds(), modulo: mod.name, registro: '', campos: [...encrypted], ruta: this.ctx.route(), filtro: loggedFilter(mod, query) }])
    }
    // The header is the record's keys, or those `campos` named.
    const columns = recordColumns(mod, encrypted.length > 0 && descifrar !== 'all', fields)
    const cursor = await storage.cursor(this.ctx.reads, where, { ...q, columns: fields && this.columns(fields) })
    // Items as a GET shows them: the export writes its records itself.
    const inDeclaredOrder = recordsInDeclaredOrder(mod)
    return {
      stream: exportBody(cursor, async (rows) => inDeclaredOrder(await this.views(rows, undefined, undefined, fields)), columns, { ...e, titles: columnTitles(mod, columns, e.headers) }),
      contentType: CONTENT_TYPES[e.format],
      filename: `${mod.path}-${today(new Date(), this.deps.timeZone)}.${e.format}`,
    }
  }

  /** One record; `query` may hold `campos` and `expandir` (docs/user-guide.md "Choosing fields and related records (campos, expandir)"). */
  async get (id: string, query: Record<string, string | string[] | undefined> = {}): Promise<ApiRecord> {
    this.authorize('ver')
    const shape = this.shape(query.campos, query.expandir)
    const columns = shape.fields && this.columns(shape.fields)
    // A whole row is judged blocked once read, which keeps a GET on the shared statement of its turn (db/row-batch.ts); a projection asks the database.
    const row = await this.plan.storage.findLive(this.ctx.reads, id, columns === undefined ? scopeCondition(this.scope('ver'), this.plan.mod, this.ctx.caller) : this.visible(), false, columns)
    if (columns === undefined && this.hidesBlocked() && isBlocked(row)) throw new AppError('REGISTRO_NO_ENCONTRADO')
    const records = await this.views([row], undefined, undefined, shape.fields)
    if (shape.expand.length > 0) await this.expand(records, shape)
    return records[0]!
  }

  /**
   * One record as its printed copy shows it (records/documents/): the
   * fields `documento.excluir` leaves out are not read, and the read is
   * logged as one `documento` entry, with the decrypted fields it holds.
   */
  async printable (id: string): Promise<ApiRecord> {
    this.authorize('ver')
    const fields = printedSelection(this.plan.mod)
    const row = await this.plan.storage.findLive(this.ctx.reads, id, this.visible(), false, this.columns(fields))
    return (await this.views([row], undefined, undefined, fields, true))[0]!
  }

  /** The live records among `ids` the caller may see, as a list shows them: the records `expandir` brings (records/expansion.ts). */
  async related (ids: readonly string[], fields?: FieldSelection): Promise<ApiRecord[]> {
    if (this.scope('ver') === 'none') return []
    return this.views(await this.plan.storage.findManyLive(this.ctx.reads, ids, this.visible(), fields && this.columns(fields)), undefined, undefined, fields)
  }

  private shape (campos: string | string[] | undefined, expandir: string | string[] | undefined): ReadShape {
    return parseReadShape(this.plan.mod, campos, expandir, (name) => this.others?.module(name))
  }

  /** The columns a projection reads, with those the `descifrar:propios` decision needs when it names an encrypted field. */
  private columns (fields: FieldSelection): readonly string[] {
    const columns = fields.encrypted.length > 0 && this.scope('descifrar') === 'own' ? [...new Set([...fields.columns, ...ownerColumns(this.plan.mod)])] : fields.columns
    // Those who read blocked records see which are, and each such read is logged.
    return this.plan.mod.personalData && !this.hidesBlocked() ? [...columns, BLOCKED_COLUMN] : columns
  }

  private expand (records: ApiRecord[], shape: ReadShape): Promise<void> {
    return expandRecords(records, shape.expand, (target) => this.others!.of(target))
  }

  /**
   * The stored live row an action that is no write of the record acts on
   * (a user's sessions, docs/user-guide.md "Accounts and sessions"): 403 without the action at all, 404
   * outside `ver` (or missing, deleted), 403 outside the action's scope.
   */
  async target (id: string, action: 'editar' | 'eliminar'): Promise<Row> {
    this.authorize(action)
    const guard = this.guard(action)
    const row = await this.plan.storage.findLive(this.ctx.em, id, guard.visible)
    if (!guard.allows(row)) throw new AppError('SIN_PERMISOS')
    return row
  }

  async create (body: Record<string, unknown>): Promise<ApiRecord> {
    this.authorize('crear')
    // A new record holds no file yet: only URL strings (records/files/file-items.ts).
    if (holdsFileObjects(this.plan.mod, body)) resolveFileItems(this.plan.mod, body, () => [])
    return this.view(await this.plan.storage.create(this.ctx, this.ctx.caller, body))
  }

  /** Many new records from a CSV or NDJSON body, all or none (docs/user-guide.md "Import (importar)"). */
  async import (req: ImportRequest): Promise<ImportAnswer> {
    this.authorize('importar')
    return importRecords(this.plan.mod, this.plan.storage, { em: this.ctx.em, caller: this.ctx.caller, timeZone: this.deps.timeZone }, req)
  }

  /**
   * Changes a record as a PUT does; `body` may be made from the stored row
   * once the update has read and locked it (an upload, records/files/file-actions.ts).
   */
  async update (id: string, body: ChangeBody, expectedVersion?: number): Promise<ApiRecord> {
    this.authorize('editar')
    const guard = this.guard('editar')
    let resolved = body
    if (typeof body !== 'function' && holdsFileObjects(this.plan.mod, body)) {
      // The files a PUT keeps are those the record holds (records/files/file-items.ts).
      const row = await this.plan.storage.findLive(this.ctx.em, id, guard.visible)
      resolved = resolveFileItems(this.plan.mod, body, (f) => filesOf(row[valueColumn(f)]))
    }
    return this.view(await this.plan.storage.update(this.ctx.em, this.ctx.caller, id, resolved, guard, expectedVersion))
  }

  private filesContext (): FilesContext {
    const files = this.deps.files
    if (files === undefined) throw new Error('no file store configured')
    return { mod: this.plan.mod, storage: this.plan.storage, files: files.store, cipher: files.cipher, maxBytes: files.maxBytes, em: this.ctx.em, caller: this.ctx.caller, ...(files.onAltered !== undefined && { onAltered: files.onAltered }) }
  }

  /** What the file actions (records/files/file-actions.ts) may use of this service. */
  private fileGate (): FileGate {
    return {
      mod: this.plan.mod,
      files: this.filesContext(),
      timeZone: this.deps.timeZone,
      authorize: (action) => { this.authorize(action) },
      update: async (id, body, expectedVersion) => this.update(id, body, expectedVersion),
      scope: (action) => this.scope(action),
      visible: () => this.visible(),
      route: () => this.ctx.route(),
    }
  }

  /** Stores an upload and adds it to the field `campo` by this service's update, at `expectedVersion` when given (docs/user-guide.md "Evidence files"). */
  async upload (id: string, campo: string, upload: Upload, expectedVersion?: number): Promise<{ archivo: ApiRecord, registro: ApiRecord }> {
    return uploadAction(this.fileGate(), id, campo, upload, expectedVersion)
  }

  /** A file's bytes (or a range), for `ver` and, when encrypted, `descifrar`; logged (records/files/file-actions.ts). */
  async download (id: string, campo: string, archivo: string, range: (size: number, sha256: string) => ByteRange | undefined): Promise<FoundFile & { body: Readable, range: ByteRange | undefined }> {
    return downloadAction(this.fileGate(), id, campo, archivo, range)
  }

  /** Who uploaded a file, who downloaded it and when, and when it left the field (docs/user-guide.md "Evidence files"). */
  async custody (id: string, campo: string, archivo: string): Promise<Custody> {
    return custodyAction(this.fileGate(), id, campo, archivo)
  }

  async remove (id: string, expectedVersion?: number): Promise<void> {
    this.authorize('eliminar')
    await this.plan.storage.remove(this.ctx.em, this.ctx.caller, id, this.guard('eliminar'), expectedVersion)
  }

  async restore (id: string): Promise<ApiRecord> {
    this.authorize('eliminar')
    return this.view(await this.plan.storage.restore(this.ctx.em, this.ctx.caller, id, this.guard('eliminar')))
  }

  /**
   * A record for its history or verification: within the caller's `ver`
   * scope, and when deleted only for holders of `eliminar` (who may see
   * deleted records, docs/operator-guide.md "History and verification"); else 404 like GET.
   */
  private async audited (id: string): Promise<Row> {
    this.authorize('ver')
    const live = await this.plan.storage.findAny(this.ctx.em, id, this.visible())
    if (live._deleted !== null && live._deleted !== undefined && this.scope('eliminar') === 'none') throw new AppError('REGISTRO_NO_ENCONTRADO')
    if (this.plan.mod.personalData && isBlocked(live)) {
      await logReads(this.ctx.em, [{ tipo: 'bloqueado', usuario: this.ctx.caller.id, fecha: nowSeconds(), modulo: this.plan.mod.name, registro: id, campos: [], ruta: this.ctx.route(), coincidencias: null }])
    }
    return live
  }

  /**
   * Every version of a record the caller may see, masked as the record is
   * now (docs/operator-guide.md "History and verification"; docs/user-guide.md "Authentication and roles"); changed encrypted fields are named only to callers
   * who may decrypt them (docs/operator-guide.md "History and verification").
   */
  async history (id: string): Promise<HistoryEntryView[]> {
    const { mod, encrypted } = this.plan
    const live = await this.audited(id)
    const versions = await versionsOf(this.ctx.em, mod, live, async () => await this.plan.storage.findAny(this.ctx.em, id, this.visible()))
    const records = await this.views(versions.map((v) => v.datos), live)
    const descifrar = encrypted.length > 0 ? this.scope('descifrar') : 'none'
    const hidden = encrypted.length > 0 && !(descifrar !== 'none' && reaches(descifrar, mod, this.ctx.caller, live)) ? new Set(encrypted) : undefined
    return versions.map((v, i) => ({
      _version: v.version,
      accion: v.accion,
      usuario: v.usuario,
      fecha: formatDateTime(new Date(v.fecha), this.deps.timeZone),
      _hash: v.hash,
      campos: hidden === undefined ? v.campos : v.campos.filter((c) => !hidden.has(c)),
      ...sealInfo(mod, v),
      ...(v.supresion !== null && { supresion: v.supresion }),
      registro: records[i]!,
    }))
  }

  /**
   * The feed's entries of this module the caller may see, as events
   * (docs/user-guide.md "Events"): `ver` and its scope judged on the record
   * as written, encrypted values as `descifrar` reaches it, decrypted
   * values logged as reads before they leave.
   */
  async events (entries: readonly FeedEntry[]): Promise<FeedEvent[]> {
    const { mod, encrypted } = this.plan
    const ver = this.scope('ver')
    if (ver === 'none') return []
    const { caller } = this.ctx
    let seen = entries.filter((e) => e.modulo === mod.name && reaches(ver, mod, caller, e.datos))
    if (seen.length === 0) return []
    // A blocked record's events, older ones too, reach only those who read it; the feed says which are blocked now.
    if (this.hidesBlocked()) seen = seen.filter((e) => !e.bloqueado)
    if (seen.length === 0) return []
    const records = await this.views(seen.map((e) => mod.personalData ? { ...e.datos, [BLOCKED_COLUMN]: e.bloqueado ? e.fecha : null } : e.datos))
    const descifrar = encrypted.length > 0 ? this.scope('descifrar') : 'none'
    const all = new Set(encrypted)
    return seen.map((e, i) => eventOf(e, records[i]!, this.deps.timeZone,
      encrypted.length > 0 && !(descifrar !== 'none' && reaches(descifrar, mod, caller, e.datos)) ? all : undefined))
  }

  /** The list's filters as a live stream of this module applies them to each event's version (records/events/stream-query.ts). */
  eventFilter (filtro: Record<string, string | string[] | undefined>): RowPredicate {
    this.authorize('ver')
    return streamFilter(this.plan.mod, filtro, this.deps.timeZone, this.deps.cipher)
  }

  async verify (id: string): Promise<Verdict<string>> {
    const live = await this.audited(id)
    const { supresiones, ...verdict } = await verifyChain(this.ctx.em, this.plan.mod, live, this.deps.cipher, this.deps.checkpoints)
    if (!verdict.valido) return verdict
    // Erasures are named with the service zone's date-time, as the history names its versions.
    const erasures = supresiones === undefined ? {} : { supresiones: supresiones.map((s) => ({ ...s, fecha: formatDateTime(s.fecha, this.deps.timeZone) })) }
    if (this.deps.files === undefined || fileFields(this.plan.mod).length === 0) return { ...verdict, ...erasures }
    // The seals hold: so must the files they seal (records/files/verify-files.ts).
    const broken = await verifyFiles(this.filesContext(), this.plan.mod, live._id as string, await versionsOf(this.ctx.em, this.plan.mod, live))
    return broken === undefined ? { ...verdict, ...erasures } : { valido: false, version_rota: broken.version, motivo: MOTIVOS[broken.motivo], archivo: broken.archivo }
  }
}
