/**
 * An import's checks (docs/user-guide.md "Import (importar)"), a batch at
 * a time: the `before` hooks of each record (which may refuse it), unique
 * values repeated between rows — the first row of each value is kept for
 * the whole import, the only thing it holds per row — and what only the
 * database shows: references to records that are not live, unique values
 * already stored. A value repeated in the file is reported once, as a
 * repeat, never also as already stored by its own earlier row.
 */
import type { Db } from '../../db/statement.js'
import type { Caller } from '../../core/access.js'
import { AppError, type ErrorDetail } from '../../core/errors.js'
import { typeOf } from '../../core/field-types/index.js'
import type { FieldDef, ModuleDef } from '../../core/registry/types.js'
import { blindIndexColumn, valueColumn } from '../../db/columns.js'
import { entityName } from '../../db/module-entity.js'
import { findRows } from '../../db/row-query.js'
import type { ColumnValue } from '../normalize.js'
import type { CreatePath } from './create-path.js'
import type { NewRecord, RowProblem } from './module-storage.js'
import type { StorageDeps } from './sql-module-storage.js'

/** Values per `in (…)` list of a check. */
const CHECK_CHUNK = 1000

/** Every TURN records a loop over an import's records lets the event loop answer other requests (docs/user-guide.md "Import (importar)"). */
const TURN = 500
export async function turn (i: number): Promise<void> {
  if (i > 0 && i % TURN === 0) await new Promise((resolve) => setImmediate(resolve))
}

const problemsOf = (fila: number, err: unknown): RowProblem[] => {
  if (!(err instanceof AppError)) throw err
  return err.detalles === undefined ? [{ fila, campo: '', mensaje: err.message }] : err.detalles.map((d: ErrorDetail) => ({ fila, ...d }))
}

/** The row where each unique value first appears in one import, by field. */
export class FirstRows {
  private readonly byField = new Map<FieldDef, Map<string, number>>()

  /** Records `fila` as the value's first row unless another came first; returns that first row. */
  claim (f: FieldDef, key: string, fila: number): number {
    let rows = this.byField.get(f)
    if (rows === undefined) { rows = new Map(); this.byField.set(f, rows) }
    const seen = rows.get(key)
    if (seen !== undefined) return seen
    rows.set(key, fila)
    return fila
  }

  /** Whether `fila` is where the value first appears (true when no row claimed it). */
  isFirst (f: FieldDef, key: string, fila: number): boolean {
    return (this.byField.get(f)?.get(key) ?? fila) === fila
  }
}

export class BulkChecks {
  constructor (private readonly mod: ModuleDef, private readonly deps: StorageDeps, private readonly creates: CreatePath) {}

  /** The `before` hooks of each record (fired by the create path, as a create's) and unique values repeated between records (remembered across batches in `first`). */
  async prepare (caller: Caller, records: readonly NewRecord[], first: FirstRows): Promise<RowProblem[]> {
    const problems: RowProblem[] = []
    for (const [i, r] of records.entries()) {
      await turn(i)
      try { await this.creates.before(caller, r.values) } catch (err) { problems.push(...problemsOf(r.fila, err)) }
    }
    for (const f of this.mod.fields.filter((x) => x.unique)) {
      for (const [i, r] of records.entries()) {
        await turn(i)
        const v = r.values.get(f)
        if (v === null || v === undefined) continue
        const seen = first.claim(f, this.uniqueKey(f, v), r.fila)
        if (seen !== r.fila) problems.push({ fila: r.fila, campo: f.name, mensaje: `repite el valor de la fila ${seen}` })
      }
    }
    return problems
  }

  /** Problems only the database shows: references to records that are not live, unique values already stored (only at a value's first row in the file). */
  async check (em: Db, records: readonly NewRecord[], first?: FirstRows): Promise<RowProblem[]> {
    const problems: RowProblem[] = []
    for (const f of this.mod.fields) {
      for (const kind of ['ref', 'unique'] as const) {
        if (kind === 'ref' ? f.ref === undefined : !f.unique) continue
        const wanted = new Map<string, { value: ColumnValue, records: NewRecord[] }>()
        for (const [i, r] of records.entries()) {
          await turn(i)
          const v = r.values.get(f)
          if (v === null || v === undefined) continue
          const key = kind === 'ref' ? v as string : this.uniqueKey(f, v)
          if (kind === 'unique' && first !== undefined && !first.isFirst(f, key, r.fila)) continue
          const entry = wanted.get(key)
          if (entry === undefined) wanted.set(key, { value: f.encrypted ? key : v, records: [r] })
          else entry.records.push(r)
        }
        if (wanted.size === 0) continue
        const found = await this.stored(em, f, kind, [...wanted.values()].map((w) => w.value))
        for (const [key, { records: rs }] of wanted) {
          if (kind === 'ref' && !found.has(key)) {
            const target = this.deps.registry.byName.get(f.ref!)!
            for (const r of rs) problems.push({ fila: r.fila, campo: f.name, mensaje: `no existe ${target.label} con id ${key}` })
          }
          if (kind === 'unique' && found.has(key)) for (const r of rs) problems.push({ fila: r.fila, campo: f.name, mensaje: 'ya existe un registro con este valor' })
        }
      }
    }
    return problems
  }

  /** How a unique value is compared: an encrypted one by its blind index, as the database holds it. */
  private uniqueKey (f: FieldDef, v: ColumnValue): string {
    if (f.encrypted) return this.deps.cipher.blindIndex(this.mod.name, f.name, typeOf(f).toPlaintext(v))
    return typeof v === 'string' ? v : JSON.stringify(v)
  }

  /** Which of `values` the database holds (as keys): live target ids of a reference, or values of a unique field (blind indexes of an encrypted one). */
  private async stored (em: Db, f: FieldDef, kind: 'ref' | 'unique', values: readonly ColumnValue[]): Promise<Set<string>> {
    const found = new Set<string>()
    const target = kind === 'ref' ? this.deps.registry.byName.get(f.ref!)! : this.mod
    const column = kind === 'ref' ? '_id' : f.encrypted ? blindIndexColumn(f) : valueColumn(f)
    for (let i = 0; i < values.length; i += CHECK_CHUNK) {
      const chunk = values.slice(i, i + CHECK_CHUNK)
      const rows = await findRows(em, entityName(target), kind === 'ref' ? { _id: { $in: chunk }, _deleted: null } : { [column]: { $in: chunk } }, {})
      for (const row of rows) {
        const v = row[column] as ColumnValue
        found.add(kind === 'ref' || f.encrypted ? v as string : this.uniqueKey(f, v))
      }
    }
    return found
  }
}
