/**
 * How an erasure of personal data shows in answers (docs/user-guide.md
 * "Personal data"): its summary (in /verificar and the erasure's own
 * answer) and its certificate (in the history, for the auditor's script).
 */
import { Type } from '@sinclair/typebox'

export const ErasureSummary = Type.Object({
  version: Type.Integer({ description: 'La versión que escribió la supresión' }),
  fecha: Type.String(),
  usuario: Type.String({ description: 'Quién suprimió (USR-…)' }),
  motivo: Type.String(),
  campos: Type.Array(Type.String(), { description: 'Campos suprimidos; los subcampos como testigos.dni' }),
})

export const ErasureCertificate = Type.Object({
  motivo: Type.String(),
  campos: Type.Array(Type.String()),
  versiones: Type.Array(Type.Object({
    version: Type.Integer(),
    hash: Type.String({ description: 'El _hash original de la versión' }),
    residuo: Type.String({ description: 'SHA-256 de su carga con los campos suprimidos nulos (docs/decisions.md, "Erasing personal data keeps the chain")' }),
  })),
}, { description: 'Solo en una supresión: su certificado, que sella _supresion' })
