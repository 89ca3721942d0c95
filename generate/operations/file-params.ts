/** The path parameters of a record's file routes (docs/user-guide.md "Evidence files"), and the file as the API shows it. */
import { Type, type TObject } from '@sinclair/typebox'
import type { ModuleDef } from '../../core/registry/types.js'
import { idPattern } from '../field-formats.js'

const fileFields = (mod: ModuleDef): string[] => mod.fields.filter((f) => f.type === 'file').map((f) => f.name)

export function fileParams (mod: ModuleDef, withFile: boolean): TObject {
  return Type.Object({
    id: Type.String({ description: `Id del registro (${mod.prefix}-AAAA-NNNNN)` }),
    campo: Type.String({ description: `Campo de archivos: ${fileFields(mod).join(', ')}` }),
    ...(withFile && { archivo: Type.String({ description: 'Id del archivo (su `id` en el campo)', maxLength: 64 }) }),
  })
}

/**
 * The same as the document shows them (`config.openapi.params`): the id
 * with its module's pattern, `campo` one of the module's file fields. The
 * validating schema stays a string: another name is the 400 of
 * records/files/record-files.ts, which says what `campo` must be.
 */
export function documentedFileParams (mod: ModuleDef, withFile: boolean): TObject {
  const params = fileParams(mod, withFile)
  return Type.Object({
    ...params.properties,
    id: Type.String({ ...params.properties.id, pattern: idPattern(mod.prefix) }),
    campo: Type.String({ enum: fileFields(mod), description: 'Campo de archivos del módulo' }),
  })
}

export const FileView = Type.Object({
  id: Type.String(),
  nombre: Type.String({ description: 'Nombre saneado' }),
  tipo: Type.String({ description: 'Tipo de contenido declarado (coincide con el detectado)' }),
  bytes: Type.Integer(),
  sha256: Type.String({ description: 'SHA-256 del contenido, en hexadecimal: entra en el sello del registro' }),
  subido: Type.String({ description: 'Fecha y hora de la subida (zona horaria del servicio)' }),
  subido_por: Type.String({ description: 'Id del usuario que lo subió' }),
})
