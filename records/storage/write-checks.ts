/**
 * What a write checks against other stored records before it writes, in
 * its transaction: every reference names a live record of its module
 * (docs/administrator-guide.md "modules.yaml reference"), and a unique
 * value is not taken by another record.
 */
import type { Db } from '../../db/statement.js'
import type { FieldCipher } from '../../core/crypto.js'
import { AppError } from '../../core/errors.js'
import { typeOf } from '../../core/field-types/index.js'
import type { FieldDef, ModuleDef, Registry } from '../../core/registry/types.js'
import { blindIndexColumn, valueColumn } from '../../db/columns.js'
import { entityName } from '../../db/module-entity.js'
import { countRows } from '../../db/row-query.js'
import type { ColumnValue } from '../normalize.js'

export class WriteChecks {
  private readonly entity: string

  constructor (private readonly mod: ModuleDef, private readonly registry: Registry, private readonly cipher: FieldCipher) {
    this.entity = entityName(mod)
  }

  /** Whether any of these values has something to check (a reference or a unique value). */
  needed (values: ReadonlyMap<FieldDef, ColumnValue>): boolean {
    for (const [f, v] of values) if (v !== null && (f.ref !== undefined || f.unique)) return true
    return false
  }

  /** Every ref must name a live record of its module (400). */
  async checkRefs (em: Db, values: Map<FieldDef, ColumnValue>): Promise<void> {
    for (const [f, v] of values) {
      if (f.ref === undefined || v === null) continue
      const target = this.registry.byName.get(f.ref!)!
      const n = await countRows(em, entityName(target), { _id: v as string, _deleted: null })
      if (n === 0) throw new AppError('DATOS_INVALIDOS', [{ campo: f.name, mensaje: `no existe ${target.label} con id ${String(v)}` }])
    }
  }

  /** Unique values already taken by another record: 409 before an id is drawn. */
  async checkUnique (em: Db, values: Map<FieldDef, ColumnValue>, selfId?: string): Promise<void> {
    const { entity, mod } = this
    for (const [f, v] of values) {
      if (!f.unique || v === null) continue
      const where = f.encrypted ? { [blindIndexColumn(f)]: this.cipher.blindIndex(mod.name, f.name, typeOf(f).toPlaintext(v)) } : { [valueColumn(f)]: v }
      const n = await countRows(em, entity, selfId === undefined ? where : { ...where, _id: { $ne: selfId } })
      if (n > 0) throw new AppError('REGISTRO_DUPLICADO', [{ campo: f.name, mensaje: 'ya existe un registro con este valor' }])
    }
  }
}
