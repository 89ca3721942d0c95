/**
 * File fields in a CSV import (docs/decisions.md "File fields in a CSV
 * import"). An export writes a file field as its items: the metadata of each
 * uploaded file (`{"id", "nombre", "sha256", …}`) and any URL string of old.
 * The file's bytes are not in the CSV, and in another deployment (or in
 * this one, for a new record) no such file exists, so a POST would refuse
 * the object (records/files/file-items.ts). An import keeps the URL strings,
 * leaves the file objects out (a cell left with none is a field not given)
 * and says so in one note per field, on row 1: how many files of how many
 * rows, and where to upload them.
 */
import type { ErrorDetail } from '../core/errors.js'
import type { FieldDef, ModuleDef } from '../core/registry/types.js'

export class SkippedFiles {
  private readonly byField = new Map<string, { files: number, rows: number }>()

  /** The items of a file field's list an import keeps (undefined: none, the field is not given). */
  keep (f: FieldDef, items: readonly unknown[]): unknown[] | undefined {
    const kept = items.filter((item) => typeof item === 'string')
    const skipped = items.length - kept.length
    if (skipped > 0) {
      const seen = this.byField.get(f.name) ?? { files: 0, rows: 0 }
      this.byField.set(f.name, { files: seen.files + skipped, rows: seen.rows + 1 })
    }
    return kept.length === 0 && skipped > 0 ? undefined : kept
  }

  /** One note per field that lost a file. */
  notes (mod: ModuleDef): ErrorDetail[] {
    return [...this.byField].map(([campo, { files, rows }]) => ({
      campo,
      mensaje: `no se importan los archivos: ${files === 1 ? 'se omitió 1 archivo' : `se omitieron ${files} archivos`} de ${rows === 1 ? '1 fila' : `${rows} filas`} (el CSV solo trae sus datos, no su contenido); súbalos a cada registro creado con POST /${mod.path}/{id}/archivos/${campo}`,
    }))
  }
}
