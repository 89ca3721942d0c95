/**
 * `POST /proteccion-datos/{module}/{id}/suprimir` in the records layer
 * (docs/user-guide.md "Personal data"; docs/decisions.md "Erasing personal
 * data keeps the chain"): only a data-protection officer's role; the
 * record's chain must hold before anything is erased; then its personal
 * data goes from every stored version, and the erasure is a version of its
 * own that verification names.
 */
import type { AccessTable, Caller } from '../../core/access.js'
import type { FieldCipher } from '../../core/crypto.js'
import { AppError, DETAILS } from '../../core/errors.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { formatDateTime, nowSeconds } from '../../core/time.js'
import type { Db } from '../../db/statement.js'
import type { ErasureCertificate } from '../../db/history-entity.js'
import { versionsOf } from '../history.js'
import { verifyChain, type ErasureSummary } from '../integrity/chain.js'
import type { Checkpoints } from '../integrity/checkpoints.js'
import { erasureCertificate, personalPaths } from '../integrity/residue.js'
import type { ModuleStorage } from '../storage/module-storage.js'
import { recordErasure } from './decisions.js'

export interface ErasureDeps {
  readonly access: AccessTable
  readonly cipher: FieldCipher
  readonly timeZone: string
  readonly checkpoints?: Checkpoints
}

/** What the erasure answers: the record's id and new version, and the erasure as /verificar names it. */
export interface ErasureAnswer {
  _id: string
  _version: number
  supresion: ErasureSummary<string>
}

export async function eraseRecord (em: Db, deps: ErasureDeps, caller: Caller, mod: ModuleDef, storage: ModuleStorage, id: string, motivo: string): Promise<ErasureAnswer> {
  if (!deps.access.protectsData(caller.rol)) throw new AppError('SIN_PERMISOS')
  const paths = personalPaths(mod)
  if (paths.length === 0) throw new AppError('SIN_DATOS_PERSONALES')
  let certificate: ErasureCertificate | undefined
  const row = await storage.erase(em, caller, id, async (tem, before) => {
    // Erasing must not launder a tampered history: the chain holds first, or nothing is erased.
    const verdict = await verifyChain(tem, mod, before, deps.cipher, deps.checkpoints)
    if (!verdict.valido) throw new AppError('INTEGRIDAD_NO_VERIFICADA', [{ campo: '_hash', mensaje: DETAILS.SUPRESION_RECHAZADA(verdict.motivo ?? '', verdict.version_rota) }])
    certificate = erasureCertificate(mod, await versionsOf(tem, mod, before), deps.cipher, paths, motivo)
    if (certificate.campos.length === 0) throw new AppError('SIN_DATOS_PERSONALES')
    await recordErasure(tem, caller, mod, id, motivo, nowSeconds())
    return certificate
  })
  return {
    _id: row._id as string,
    _version: row._version as number,
    supresion: { version: row._version as number, fecha: formatDateTime(row._modified as Date, deps.timeZone), usuario: caller.id, motivo, campos: certificate!.campos },
  }
}
