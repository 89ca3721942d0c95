/**
 * `file`: evidence files (docs/user-guide.md "Evidence files"), a list
 * stored as jsonb like an array. Each file the service stored is an object
 * `{id, nombre, tipo, bytes, sha256, subido, subido_por}`; the bytes live
 * in the file store, content-addressed by `sha256`, and the object (so the
 * hash) enters the record's seal. A URL string, the form these fields had
 * as plain arrays, stays a valid item: stored values read and verify as
 * before. Files are added by the upload route only; a PUT may keep or drop
 * the stored ones (records/files/file-items.ts), never invent one.
 */
import { Type } from '@sinclair/typebox'
import { described, takesNoDefault } from './common.js'
import { JSON_LIST } from './array.js'
import type { FieldTypeImpl, InstantFormat } from './types.js'
import { countText } from '../spanish-text.js'

/** One stored file of a file field; `subido` is UTC (`YYYY-MM-DDTHH:MM:SSZ`) as stored and in the seal. */
export interface FileItem {
  readonly id: string
  readonly nombre: string
  readonly tipo: string
  readonly bytes: number
  readonly sha256: string
  readonly subido: string
  readonly subido_por: string
}

const FILE_KEYS = ['bytes', 'id', 'nombre', 'sha256', 'subido', 'subido_por', 'tipo'] as const

/** Whether an item is a stored file (not a URL string of old, nor another object). */
export function isFileItem (item: unknown): item is FileItem {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return false
  const keys = Object.keys(item).sort()
  return keys.length === FILE_KEYS.length && keys.every((k, i) => k === FILE_KEYS[i]) &&
    typeof (item as FileItem).sha256 === 'string' && /^[0-9a-f]{64}$/.test((item as FileItem).sha256) &&
    typeof (item as FileItem).id === 'string' && Number.isSafeInteger((item as FileItem).bytes)
}

/** A stored file's keys and types (generate/read-schemas.ts documents it from these). */
export const FileObject = Type.Object({
  id: Type.String({ maxLength: 64 }),
  nombre: Type.String({ maxLength: 255 }),
  tipo: Type.String({ maxLength: 255 }),
  bytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  subido: Type.String({ maxLength: 40 }),
  subido_por: Type.String({ maxLength: 64 }),
}, { additionalProperties: false })

const Item = Type.Union([Type.String({ maxLength: 2000, description: 'URL de un documento (forma anterior de estos campos)' }), FileObject])

/** A stored file as the API shows it: `subido` in the service time zone (the seal's `instant` keeps UTC). */
function viewItem (item: unknown, instant: InstantFormat): unknown {
  return isFileItem(item) ? { ...item, subido: instant(new Date(item.subido)) } : item
}

export const fileType: FieldTypeImpl = {
  ...JSON_LIST,
  input: (f) => Type.Array(Item, { ...described(f), maxItems: f.maxItems ?? 200 }),
  output: () => Type.Array(Type.Unknown()),
  defaultProblem: takesNoDefault('file'),
  view: (stored, instant) => Array.isArray(stored) ? stored.map((item) => viewItem(item, instant)) : stored,
  // A file by its name, type and size, with the start of its SHA-256 that ties the paper to the stored bytes.
  printed: (value) => (value as unknown[]).map((item) => isFileItem(item)
    ? `• ${item.nombre} (${item.tipo}, ${countText(item.bytes)} bytes, SHA-256 ${item.sha256.slice(0, 16)}…)`
    : `• ${String(item)}`).join('\n'),
}
