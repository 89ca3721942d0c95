/**
 * A record's evidence files (docs/user-guide.md "Evidence files"): an
 * upload staged in the file store, then added to its field by the
 * record's ordinary update, which reads the row once and commits the bytes
 * (a new version, its history entry, its seal and event: the file's sha256
 * is in the item, so in the seal), and a download
 * found in the field, or for those who may see deleted things in the
 * record's history. Permissions are the records service's: its update
 * checks an upload as it checks a PUT; a download is handed its conditions.
 */
import { randomUUID } from 'node:crypto'
import { pipeline, type Readable } from 'node:stream'
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import { AppError, DETAILS, invalid, required } from '../../core/errors.js'
import { declaredType, recordedType, sanitizeFileName, sniffType, typeMismatch } from '../../core/file-content.js'
import type { FileItem } from '../../core/field-types/file.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { valueColumn } from '../../db/columns.js'
import type { Row } from '../../db/module-entity.js'
import type { FileStore } from '../../stores/files/contract.js'
import { fileAad, type FileCipher } from '../../core/file-cipher.js'
import { isoSeconds } from '../record-view.js'
import { versionsOf } from '../history.js'
import type { ModuleStorage } from '../storage/module-storage.js'
import type { OnAltered } from './sealed-read.js'
import { filesOf } from './file-items.js'
import type { Where } from '../scope.js'

/** What an upload brings: its body, declared type and size, and `?nombre=`. */
export interface Upload {
  readonly body: Readable | undefined
  readonly contentType: string | undefined
  /** Content-Length, when declared (a body larger than the limit is refused before a byte is read). */
  readonly length: number | undefined
  readonly nombre: string | undefined
}

export interface FilesContext {
  readonly mod: ModuleDef
  readonly storage: ModuleStorage
  readonly files: FileStore
  readonly cipher: FileCipher
  readonly maxBytes: number
  readonly em: Db
  readonly caller: Caller
  /** Told of a stored file found altered on its way out (records/files/sealed-read.ts): the log line and the metric. */
  readonly onAltered?: OnAltered
}

/** The declared file field `campo`, else 400. */
export function fileField (mod: ModuleDef, campo: string): FieldDef {
  const f = mod.fieldMap.get(campo)
  if (f === undefined || f.type !== 'file') throw invalid('campo', DETAILS.NO_ES_CAMPO_DE_ARCHIVOS)
  return f
}

/** Ids of files encrypted at rest start so (whatever the field declares now). */
const ENCRYPTED_ID = 'cif-'

/** Whether a stored file is encrypted at rest. */
export function isEncryptedFile (item: FileItem): boolean {
  return item.id.startsWith(ENCRYPTED_ID)
}

/** The store key of a file: its content address; an encrypted file (a ciphertext of its own), its id. */
export function storeKey (item: FileItem): string {
  return isEncryptedFile(item) ? item.id : item.sha256
}

/**
 * The stored bytes of a file as uploaded: decrypted on the way out when
 * encrypted at rest (a file altered in storage fails at its GCM tag).
 * Downloads read through records/files/sealed-read.ts instead.
 */
export async function openFile (ctx: Pick<FilesContext, 'files' | 'cipher'>, recordId: string, field: string, item: FileItem): Promise<Readable> {
  if (!isEncryptedFile(item)) return ctx.files.open(storeKey(item))
  const stored = await ctx.files.open(storeKey(item))
  const plain = ctx.cipher.decryptor(fileAad(recordId, field, item.id))
  // An error anywhere (the store, the tag) destroys the stream returned.
  return pipeline(stored, plain, () => undefined)
}

/** An upload's bytes staged in the file store, and the item that names them. */
export interface StagedUpload {
  readonly item: FileItem
  /**
   * The update that adds the file, made from the stored row (read and
   * locked once, by the update itself): 400 past the field's limit, else
   * the bytes are committed under their key and the field is the row's
   * items and this one.
   */
  addTo (before: Row): Promise<Record<string, unknown>>
  /** Discards the staged bytes unless committed (an upload refused or failed). */
  drop (): Promise<void>
}

/**
 * Checks the request (400, 413) and stages the bytes (415 on a type
 * mismatch, 400 when empty); nothing is stored under a key until `addTo`.
 */
export async function stageUpload (ctx: FilesContext, id: string, campo: string, upload: Upload): Promise<StagedUpload> {
  const f = fileField(ctx.mod, campo)
  if (upload.nombre === undefined || upload.nombre === '') throw required('nombre')
  const nombre = sanitizeFileName(upload.nombre)
  if (nombre === undefined) throw invalid('nombre', 'no es un nombre de archivo válido')
  const declared = declaredType(upload.contentType)
  if (declared === undefined) throw invalid('Content-Type', DETAILS.TIPO_NO_VALIDO)
  if (upload.length !== undefined && upload.length > ctx.maxBytes) throw new AppError('PETICION_DEMASIADO_GRANDE')
  if (upload.body === undefined) throw new AppError('DATOS_REQUERIDOS', [{ campo: 'body', mensaje: DETAILS.ARCHIVO_VACIO }])
  const fileId = f.encryptedFiles === true ? `${ENCRYPTED_ID}${randomUUID()}` : randomUUID()
  const transform = f.encryptedFiles === true ? ctx.cipher.encryptor(fileAad(id, f.name, fileId)) : undefined
  const staged = await ctx.files.stage(upload.body, { maxBytes: ctx.maxBytes, ...(transform !== undefined && { transform }) })
  let item: FileItem
  try {
    if (staged.bytes === 0) throw new AppError('DATOS_REQUERIDOS', [{ campo: 'body', mensaje: DETAILS.ARCHIVO_VACIO }])
    const sniffed = sniffType(staged.head)
    if (typeMismatch(declared, sniffed)) throw new AppError('TIPO_CONTENIDO_NO_SOPORTADO', [{ campo: 'Content-Type', mensaje: DETAILS.TIPO_NO_COINCIDE(declared, sniffed ?? 'sin tipo reconocible') }])
    item = { id: fileId, nombre, tipo: recordedType(declared, sniffed), bytes: staged.bytes, sha256: staged.sha256, subido: isoSeconds(new Date()), subido_por: ctx.caller.id }
  } catch (err) {
    // The failure that matters is the upload's (a store gone also fails the clean-up).
    await staged.discard().catch(() => undefined)
    throw err
  }
  const max = f.maxItems ?? 200
  let committed = false
  return {
    item,
    async addTo (before) {
      const items = currentItems(before, f)
      if (items.length >= max) throw invalid(campo, DETAILS.ARCHIVOS_MAXIMOS(max))
      // Content-addressed: an update that fails after this leaves the bytes referenced by nothing.
      await staged.commit(storeKey(item))
      committed = true
      return { [f.name]: [...items, item] }
    },
    async drop () {
      if (!committed) await staged.discard().catch(() => undefined)
    },
  }
}

/** The field's stored items (URL strings included) of a stored row. */
function currentItems (row: Row, f: FieldDef): unknown[] {
  const v = row[valueColumn(f)]
  return Array.isArray(v) ? v : []
}

/** The stored file `archivo` of a field value, if it holds it. */
function fileNamed (value: unknown, archivo: string): FileItem | undefined {
  for (const item of filesOf(value)) if (item.id === archivo) return item
  return undefined
}

/** A stored file the caller may download, with its size in the store. */
export interface FoundFile {
  readonly item: FileItem
  readonly field: FieldDef
  /** Undefined: the store lacks the bytes a version names (records/files/sealed-read.ts reports it as altered). */
  readonly size: number | undefined
  readonly record: Row
}

/**
 * The file `archivo` of the record's field: in the live record, or (for
 * `history: true`, callers who may see deleted things) in any version of
 * it; 404 when no version the caller may see names it.
 */
export async function findFile (ctx: Pick<FilesContext, 'mod' | 'storage' | 'files'>, em: Db, id: string, campo: string, archivo: string, visible: Where | undefined, history: boolean): Promise<FoundFile> {
  const f = fileField(ctx.mod, campo)
  const record = await ctx.storage.findLive(em, id, visible)
  let item = fileNamed(record[valueColumn(f)], archivo)
  if (item === undefined && history) {
    for (const v of (await versionsOf(em, ctx.mod, record)).reverse()) {
      item = fileNamed(v.datos[valueColumn(f)], archivo)
      if (item !== undefined) break
    }
  }
  if (item === undefined) throw new AppError('ARCHIVO_NO_ENCONTRADO')
  // Missing from the store while a version names it: removed behind the service's back (a download reports it as altered).
  const size = await ctx.files.size(storeKey(item))
  return { item, field: f, size, record }
}
