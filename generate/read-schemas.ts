/**
 * A read's record as the OpenAPI document shows it, in the three shapes a
 * read can have (docs/user-guide.md "Choosing fields and related records
 * (campos, expandir)"), so that a generated client's types say what each
 * holds: `<module>Record`, a plain read, every field present and each
 * reference its id; `<module>Expandido`, a read with `expandir`, where a
 * reference may hold the related record; `<module>Parcial`, a read with
 * `campos`, only `_id` and the named fields. A file field's items are
 * `ArchivoAdjunto` (or a URL, the form such fields had as plain arrays).
 * Documentation only: the serializer's schemas (generate/schemas.ts)
 * stay as loose as the values they write.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import type { ModuleDef } from '../core/registry/types.js'
import { nullable } from '../core/field-types/common.js'
import { FileObject } from '../core/field-types/file.js'
import { DATETIME_PATTERN } from './field-formats.js'

type Schema = Record<string, unknown>

/** The component a stored file is documented as (core/field-types/file.ts `FileItem`, as the API shows it). */
export const FILE_ITEM = 'ArchivoAdjunto'

export function fileItemSchema (timeZone: string): TSchema {
  // The stored shape (core/field-types/file.ts), with `subido` as the API shows it: in the service zone.
  return Type.Object({
    ...FileObject.properties,
    subido: Type.String({ pattern: DATETIME_PATTERN, description: `Cuándo se subió (hora de ${timeZone})` }),
  }, { additionalProperties: false })
}

/** A file field's value: its stored files, or URLs kept from when it was a plain array. */
function fileList (): TSchema {
  return Type.Array(Type.Union([
    Type.Unsafe({ $ref: `#/components/schemas/${FILE_ITEM}` }),
    Type.String({ maxLength: 2000, description: 'URL de un documento (forma anterior de estos campos)' }),
  ]))
}

/** The related record of an expanded reference, as the caller sees it in its module. */
function expandedRef (ref: string, name: string): TSchema {
  return Type.Object({ _id: Type.String() }, {
    additionalProperties: true,
    description: `El registro de ${ref} al que apunta, con expandir=${name}: como el usuario lo ve en su módulo (con campos=${name}.<campo>, solo _id y esos campos)`,
  })
}

export interface ReadShapes {
  record: Schema
  expanded: Schema
  partial: Schema
}

/**
 * The three shapes from the record's documented properties (`properties`,
 * formats applied), the fields it always carries (`always`), its example
 * and what else the record schema says (`documented`).
 */
export function readShapes (mod: ModuleDef, properties: Record<string, TSchema>, always: readonly string[], example: Record<string, unknown>, documented: Schema): ReadShapes {
  const plain: Record<string, TSchema> = { ...properties }
  const expanded: Record<string, TSchema> = { ...properties }
  for (const f of mod.fields) {
    if (plain[f.name] === undefined) continue
    if (f.type === 'file') plain[f.name] = expanded[f.name] = { ...nullable(fileList()), ...pickText(plain[f.name]!) } as TSchema
    // A plain read's reference is its id (the property as formatted: the related module's id pattern).
    if (f.type === 'ref') {
      const { title: _t, description: _d, ...id } = plain[f.name] as Schema
      expanded[f.name] = { ...Type.Union([id as TSchema, expandedRef(f.ref!, f.name)]), ...pickText(plain[f.name]!) } as TSchema
    }
  }
  const refs = mod.fields.some((f) => f.type === 'ref')
  const unexpanded = Type.Optional(Type.Array(Type.String(), { description: 'Referencias pedidas en expandir que se quedan como id: registros que el usuario no puede ver, eliminados o inexistentes' }))
  if (refs) expanded._sin_expandir = unexpanded
  // With campos only _id and the named fields come (docs/decisions.md "A read with campos is a partial record").
  const named = Object.keys(example).filter((k) => !k.startsWith('_')).slice(0, 2)
  return {
    record: { ...documented, properties: plain, required: [...always], examples: [example] },
    expanded: {
      ...documented,
      properties: expanded,
      required: [...always],
      description: `${String(documented.description ?? '')} Leído con expandir: una referencia puede ser el registro al que apunta.`,
      examples: [example],
    },
    partial: {
      ...documented,
      properties: refs ? expanded : plain,
      required: ['_id'],
      description: `Un registro leído con campos: solo _id y los campos nombrados (null si no tienen valor), salvo los cifrados que el usuario no puede ver, nombrados en _restringidos.${refs ? ' Con expandir, una referencia puede ser el registro al que apunta.' : ''}`,
      examples: [{ _id: example._id, ...Object.fromEntries(named.map((k) => [k, example[k]])), _version: 1 }],
    },
  }
}

/** A property's words (title, description), kept when its schema is replaced. */
function pickText (s: TSchema): Schema {
  const { title, description } = s as Schema
  return { ...(title !== undefined && { title }), ...(description !== undefined && { description }) }
}
