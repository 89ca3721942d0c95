/** Schemas every route shares: the success envelope and the id path parameter. */
import { Type, type TObject, type TSchema } from '@sinclair/typebox'

/** Path parameter of the routes on one record. */
export const IdParams = Type.Object({ id: Type.String({ description: 'Id del registro' }) })

export function envelope (data: TSchema): TObject {
  return Type.Object({ success: Type.Literal(true), data })
}

export const Message = envelope(Type.Object({ message: Type.String() }))
