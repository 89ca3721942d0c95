/**
 * A file field's items as a client may write them (docs/user-guide.md
 * "Evidence files"): files are added only by uploading, so a POST, PUT or
 * import may hold URL strings (the fields' older form) and, in a PUT, the
 * files the record holds now (to keep them; leaving one out removes it
 * from the field, its bytes stay). A file object the record does not
 * hold is refused: nobody writes a file's hash by hand.
 */
import { invalid } from '../../core/errors.js'
import { isFileItem, type FileItem } from '../../core/field-types/file.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { DETAILS } from '../../core/errors.js'

/** The file fields of a module. */
export function fileFields (mod: ModuleDef): readonly FieldDef[] {
  let fields = fieldsByModule.get(mod)
  if (fields === undefined) fieldsByModule.set(mod, fields = Object.freeze(mod.fields.filter((f) => f.type === 'file')))
  return fields
}

/** A module's file fields, found once: every create and PUT asks (holdsFileObjects). */
const fieldsByModule = new WeakMap<ModuleDef, readonly FieldDef[]>()

/** The stored files of a field value (URL strings and other items left out). */
export function filesOf (value: unknown): FileItem[] {
  return Array.isArray(value) ? value.filter(isFileItem) : []
}

/**
 * `body` with each file field's objects replaced by the stored file of the
 * same id in `current(field)` (what a GET showed, `subido` in local time,
 * becomes the stored object again); 400 for an object the record does not hold.
 */
export function resolveFileItems (mod: ModuleDef, body: Record<string, unknown>, current: (f: FieldDef) => readonly FileItem[]): Record<string, unknown> {
  let out = body
  for (const f of fileFields(mod)) {
    const value = body[f.name]
    if (!Array.isArray(value) || !value.some((v) => v !== null && typeof v === 'object')) continue
    const held = new Map(current(f).map((item) => [item.id, item]))
    const items = value.map((v, i) => {
      if (v === null || typeof v !== 'object') return v as unknown
      const id = (v as { id?: unknown }).id
      const stored = typeof id === 'string' ? held.get(id) : undefined
      if (stored === undefined) throw invalid(`${f.name}[${i}]`, DETAILS.ARCHIVO_AJENO)
      return stored
    })
    out = { ...out, [f.name]: items }
  }
  return out
}

/** Whether a body names a file object in any file field (a PUT that must be resolved against the record). */
export function holdsFileObjects (mod: ModuleDef, body: Record<string, unknown>): boolean {
  return fileFields(mod).some((f) => Array.isArray(body[f.name]) && (body[f.name] as unknown[]).some((v) => v !== null && typeof v === 'object'))
}
