/**
 * What a caller does with a record's evidence files through the records
 * service (docs/user-guide.md "Evidence files"): upload, download, custody.
 * The permissions are the service's (it hands in its gate): an upload is
 * its update, `ver` to download and read custody, a removed file
 * only for those who may see deleted things, `descifrar` reaching the
 * record for an encrypted file; every download logged before a byte leaves.
 */
import type { Readable } from 'node:stream'
import type { Scope } from '../../core/access.js'
import { AppError } from '../../core/errors.js'
import type { FileItem } from '../../core/field-types/file.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { formatDateTime } from '../../core/time.js'
import type { ByteRange } from '../../stores/files/contract.js'
import { reaches, type Where } from '../scope.js'
import type { ChangeBody } from '../storage/module-storage.js'
import { custodyOf, logDownload, type Custody } from './custody.js'
import { checkStoredSize, openSealed } from './sealed-read.js'
import { findFile, isEncryptedFile, stageUpload, type FilesContext, type FoundFile, type Upload } from './record-files.js'

/** What the records service lends a file action: its permissions, its public update, the request. */
export interface FileGate {
  readonly mod: ModuleDef
  readonly files: FilesContext
  readonly timeZone: string
  authorize (action: 'ver' | 'editar'): void
  /** The service's update, as a PUT calls it (records/records-service.ts): the API record as written. */
  update (id: string, body: ChangeBody, expectedVersion?: number): Promise<Record<string, unknown>>
  scope (action: 'eliminar' | 'descifrar'): Scope
  visible (): Where | undefined
  route (): string
}

/** A file item as the API shows it (`subido` in the service's zone). */
function fileView (gate: FileGate, item: FileItem): Record<string, unknown> {
  return { ...item, subido: formatDateTime(new Date(item.subido), gate.timeZone) }
}

/**
 * Stages an upload, then adds it to the field `campo` by the service's
 * update: the checks of a PUT (`editar` and its scope, the version when
 * given, state rules, hooks) on the row it reads and locks once; the bytes
 * are committed under their key only once those pass.
 */
export async function uploadAction (gate: FileGate, id: string, campo: string, upload: Upload, expectedVersion?: number): Promise<{ archivo: Record<string, unknown>, registro: Record<string, unknown> }> {
  gate.authorize('editar')
  const staged = await stageUpload(gate.files, id, campo, upload)
  try {
    const registro = await gate.update(id, async (before) => staged.addTo(before), expectedVersion)
    return { archivo: fileView(gate, staged.item), registro }
  } catch (err) {
    await staged.drop()
    throw err
  }
}

/** A file of the record the caller may see: `ver` on the record; a removed file only for those who may see deleted things. */
async function visibleFile (gate: FileGate, id: string, campo: string, archivo: string): Promise<FoundFile> {
  gate.authorize('ver')
  return findFile(gate.files, gate.files.em, id, campo, archivo, gate.visible(), gate.scope('eliminar') !== 'none')
}

/**
 * A file to download and its bytes (or a range of them): an encrypted one
 * needs `descifrar` reaching the record (403). Every download is logged
 * before a byte leaves: an encrypted file's in the read log, a plain one's
 * in the access log (records/files/custody.ts).
 */
export async function downloadAction (gate: FileGate, id: string, campo: string, archivo: string, range: (size: number, sha256: string) => ByteRange | undefined): Promise<FoundFile & { body: Readable, range: ByteRange | undefined }> {
  const found = await visibleFile(gate, id, campo, archivo)
  const encrypted = isEncryptedFile(found.item)
  const { caller } = gate.files
  if (encrypted) {
    const descifrar = gate.scope('descifrar')
    if (descifrar === 'none' || !reaches(descifrar, gate.mod, caller, found.record)) throw new AppError('SIN_PERMISOS')
  }
  const recordId = found.record._id as string
  const sealed = { module: gate.mod.name, record: recordId, field: found.field.name, item: found.item }
  // Altered evidence is never served (records/files/sealed-read.ts): a stored size the seal does not mean fails here.
  checkStoredSize(sealed, found.size, gate.files.onAltered)
  // The caller receives (ranges of) the bytes uploaded: the sealed size.
  const size = found.item.bytes
  const r = range(size, found.item.sha256)
  await logDownload(gate.files.em, { caller, mod: gate.mod, recordId, field: found.field.name, item: found.item, route: gate.route(), range: r })
  return { ...found, size, range: r, body: await openSealed(gate.files, sealed, r) }
}

/** Who uploaded a file, who downloaded it and when, and when it left the field. */
export async function custodyAction (gate: FileGate, id: string, campo: string, archivo: string): Promise<Custody> {
  const found = await visibleFile(gate, id, campo, archivo)
  return custodyOf(gate.files.em, gate.mod, found, gate.timeZone, (item) => fileView(gate, item))
}
