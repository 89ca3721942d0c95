/**
 * A file's chain of custody (docs/user-guide.md "Evidence files"): who
 * uploaded it and when, from the record's history (the version that added
 * it, the one that removed it); who downloaded it and when, from the read
 * log (`descarga`: an encrypted file, whose download is a read of
 * decrypted data) or the access log beside it (`acceso`: a plain file),
 * both rows of `sys_lecturas` naming the file's id.
 */
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import type { FileItem } from '../../core/field-types/file.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { formatDateTime, nowSeconds } from '../../core/time.js'
import { valueColumn } from '../../db/columns.js'
import { fileDownloads } from '../../db/read-log-statements.js'
import type { ByteRange } from '../../stores/files/contract.js'
import { versionsOf } from '../history.js'
import { logReads } from '../read-log.js'
import { filesOf } from './file-items.js'
import { isEncryptedFile, type FoundFile } from './record-files.js'

export interface DownloadEntry {
  readonly caller: Caller
  readonly mod: ModuleDef
  readonly recordId: string
  readonly field: string
  readonly item: FileItem
  readonly route: string
  readonly range: ByteRange | undefined
}

/** One row per download, written before its first byte leaves. */
export async function logDownload (em: Db, d: DownloadEntry): Promise<void> {
  await logReads(em, [{
    tipo: isEncryptedFile(d.item) ? 'descarga' : 'acceso',
    usuario: d.caller.id,
    fecha: nowSeconds(),
    modulo: d.mod.name,
    registro: d.recordId,
    campos: [d.field],
    ruta: d.range === undefined ? d.route : `${d.route} bytes=${d.range.start}-${d.range.end}`,
    coincidencias: null,
    filtro: d.item.id,
  }])
}

export interface CustodyEvent {
  accion: 'subida' | 'retirada' | 'descarga'
  usuario: string
  fecha: string
  /** The record's version that added or removed the file. */
  version?: number
  /** A download of part of the file: its range. */
  rango?: string
}

export interface Custody {
  archivo: Record<string, unknown>
  cifrado: boolean
  eventos: CustodyEvent[]
}

export async function custodyOf (em: Db, mod: ModuleDef, found: FoundFile, timeZone: string, show: (item: FileItem) => Record<string, unknown>): Promise<Custody> {
  const column = valueColumn(found.field)
  const id = found.item.id
  const events: Array<CustodyEvent & { at: number }> = []
  let held = false
  for (const v of await versionsOf(em, mod, found.record)) {
    const now = filesOf(v.datos[column]).some((i) => i.id === id)
    if (now !== held) events.push({ accion: now ? 'subida' : 'retirada', usuario: v.usuario, fecha: formatDateTime(new Date(v.fecha), timeZone), version: v.version, at: new Date(v.fecha).getTime() })
    held = now
  }
  const reads = await fileDownloads(em, mod.name, found.record._id as string, id)
  for (const r of reads) {
    const rango = / bytes=(\d+-\d+)$/.exec(r.ruta)?.[1]
    events.push({ accion: 'descarga', usuario: r.usuario, fecha: formatDateTime(new Date(r.fecha), timeZone), ...(rango !== undefined && { rango }), at: new Date(r.fecha).getTime() })
  }
  // Times are whole seconds: within one, the upload comes first and the removal last (downloads keep their order).
  const RANK = { subida: 0, descarga: 1, retirada: 2 }
  events.sort((a, b) => Math.floor(a.at / 1000) - Math.floor(b.at / 1000) || RANK[a.accion] - RANK[b.accion])
  return { archivo: show(found.item), cifrado: isEncryptedFile(found.item), eventos: events.map(({ at: _at, ...e }) => e) }
}
