/**
 * The problems of an import and the report made of them (docs/user-guide.md
 * "Import (importar)"): at most MAX_PROBLEMS are listed, in row order, and
 * the rest counted, so a file with a problem in every row keeps a bounded
 * list in memory however many rows it has.
 */
import { AppError } from '../core/errors.js'
import type { RowProblem } from './storage/module-storage.js'

/** Problems listed at most; `errores_omitidos` counts the rest. */
export const MAX_PROBLEMS = 1000

/** A dry run's answer, and the problems of a refused import. */
export interface ImportReport {
  filas: number
  validas: number
  errores: RowProblem[]
  errores_omitidos: number
  /** What the import leaves out without refusing the file (file fields of a CSV); only when there is some. */
  avisos?: RowProblem[]
}

const byRow = (a: RowProblem, b: RowProblem): number => a.fila - b.fila

/** The first MAX_PROBLEMS problems by row (stable: a row's problems in the order found), and how many others. */
export class ProblemList {
  private kept: RowProblem[] = []
  private dropped = 0
  /** Data rows with a problem (not the header's row 1). */
  private readonly rows = new Set<number>()

  add (p: RowProblem, header = false): void {
    this.kept.push(p)
    if (!header) this.rows.add(p.fila)
    if (this.kept.length >= 2 * MAX_PROBLEMS) this.trim()
  }

  addAll (ps: readonly RowProblem[]): void {
    for (const p of ps) this.add(p)
  }

  get size (): number { return this.kept.length + this.dropped }

  /** Rows with at least one problem. */
  get badRows (): number { return this.rows.size }

  report (filas: number): ImportReport {
    this.trim()
    return { filas, validas: filas - this.rows.size, errores: this.kept, errores_omitidos: this.dropped }
  }

  private trim (): void {
    this.kept.sort(byRow)
    if (this.kept.length > MAX_PROBLEMS) {
      this.dropped += this.kept.length - MAX_PROBLEMS
      this.kept.length = MAX_PROBLEMS
    }
  }
}

/** The 400 of an import with problems: each `campo` names its row. */
export function refusal (r: ImportReport): AppError {
  return new AppError('DATOS_INVALIDOS', r.errores.map((p) => ({ campo: p.campo === '' ? `fila ${p.fila}` : `fila ${p.fila}: ${p.campo}`, mensaje: p.mensaje })))
}
