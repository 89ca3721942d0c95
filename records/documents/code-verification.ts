/**
 * `POST /documentos/verificar` (docs/user-guide.md "Printed records"):
 * whether a printed copy's code was signed by this deployment's key and
 * names a version the record's history holds with that seal. It answers
 * the code's id and version, and whether a newer version exists; nothing
 * else of the record. A bad signature is judged before the database is
 * asked, so a forged code learns nothing of which records exist.
 */
import { invalid } from '../../core/errors.js'
import type { Registry } from '../../core/registry/types.js'
import type { Db } from '../../db/statement.js'
import { versionSeal } from '../../db/history-statements.js'
import { readCode, signedMessage } from './document-code.js'

export interface CodeVerdict {
  readonly valido: boolean
  readonly id: string
  readonly version: number
  /** Only when valid: a later version of the record exists (an edit, a deletion). */
  readonly hay_version_posterior?: boolean
  /** Only when not valid: why, in a person's words. */
  readonly motivo?: string
}

export const CODE_PROBLEM = 'no es un código de verificación: se espera ID.VERSIÓN.FIRMA, tal como figura bajo el código QR de la copia impresa'

export async function verifyCode (db: Db, registry: Registry, text: string, valid: (message: Buffer, signature: Buffer) => boolean): Promise<CodeVerdict> {
  const code = readCode(text)
  if (code === undefined) throw invalid('codigo', CODE_PROBLEM)
  const { id, version } = code
  if (!valid(signedMessage(code), code.signature)) return { valido: false, id, version, motivo: 'la firma no es de la clave de este servicio: el código se ha alterado o no lo emitió este servicio' }
  const prefix = id.slice(0, id.indexOf('-'))
  const mod = registry.modules.find((m) => m.prefix === prefix)
  const seal = mod === undefined ? undefined : await versionSeal(db, mod.name, id, version)
  if (seal === undefined || seal.hash !== code.hash) return { valido: false, id, version, motivo: 'el registro no consta con esa versión y ese sello' }
  return { valido: true, id, version, hay_version_posterior: seal.latest > version }
}
