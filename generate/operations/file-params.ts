/** The path parameters of a record's file routes (docs/user-guide.md "Evidence files"), and the file as the API shows it. */
import { Type, type TObject } from '@sinclair/typebox'
import type { ModuleDef } from '../../core/registry/types.js'

export function fileParams (mod: ModuleDef, withFile: boolean): TObject {
  const campos = mod.fields.filter((f) => f.type === 'file').map((f) => f.name)
  return Type.Object({
    id: Type.String({ description: `Id del registro (${mod.prefix}-AAAA-NNNNN)` }),
    campo: Type.String({ description: `Campo de archivos: ${campos.join(', ')}` }),
    ...(withFile && { archivo: Type.String({ description: 'Id del archivo (su `id` en el campo)', maxLength: 64 }) }),
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
