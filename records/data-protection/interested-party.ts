/**
 * `GET /proteccion-datos/interesado?dni=…` in the records layer
 * (docs/user-guide.md "Personal data"): every record of every
 * module, deleted ones too, that holds the DNI in a field or a structured
 * array's sub-field of format `dni` — an encrypted one through its blind
 * index, a plain one by its value — with who read each record and when (the
 * read log). Only a data-protection officer's role; each search is itself a
 * read-log entry (`interesado`), never with the DNI searched for.
 */
import type { AccessTable, Caller } from '../../core/access.js'
import type { FieldCipher } from '../../core/crypto.js'
import { AppError, invalid } from '../../core/errors.js'
import { dni } from '../../core/field-types/formats/dni.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { nowSeconds } from '../../core/time.js'
import { blindIndexColumn, itemIndexColumn, valueColumn } from '../../db/columns.js'
import { recordsHolding, type HoldingTest } from '../../db/person-statements.js'
import type { Db } from '../../db/statement.js'
import { logReads, readsOfRecord, type ReadLogView } from '../read-log.js'

export interface PersonSearchDeps {
  readonly access: AccessTable
  readonly cipher: FieldCipher
  readonly timeZone: string
}

/** One record holding the DNI. */
export interface PersonRecord {
  modulo: string
  id: string
  /** Where it holds it: fields, and sub-fields as `testigos.dni`. */
  campos: string[]
  eliminado: boolean
  /** Who read it and when, newest first (the latest READS_SHOWN). */
  lecturas: { total: number, records: ReadLogView[] }
}

export interface PersonAnswer {
  registros: PersonRecord[]
  total: number
  /** Fields of format dni that cannot be searched: encrypted without a blind index (`searchable`). */
  no_buscables: string[]
}

export const READS_SHOWN = 100

/** The DNI as stored (upper case, its letter checked), or a 400; the officer's report prints it so (records/documents/person-report.ts). */
export function personDni (text: unknown): string {
  const value = typeof text === 'string' ? text.trim().toUpperCase() : ''
  const checked = value !== '' && new RegExp(dni.pattern, 'u').test(value) ? dni.check(value) : undefined
  if (typeof checked !== 'string') throw invalid('dni', 'debe ser un DNI o NIE con su letra de control (12345678Z, X1234567L)')
  return checked
}

/** What to ask of one module's table, and the paths they stand for; the paths no test can reach. */
function testsOf (mod: ModuleDef, value: string, cipher: FieldCipher): { tests: HoldingTest[], paths: string[], unsearchable: string[] } {
  const tests: HoldingTest[] = []
  const paths: string[] = []
  const unsearchable: string[] = []
  for (const f of mod.fields) {
    if (f.format === 'dni') {
      if (!f.encrypted) tests.push({ column: valueColumn(f), equals: value })
      else if (f.searchable) tests.push({ column: blindIndexColumn(f), equals: cipher.blindIndex(mod.name, f.name, value) })
      else { unsearchable.push(`${mod.name}.${f.name}`); continue }
      paths.push(f.name)
    }
    for (const s of f.items ?? []) {
      if (s.format !== 'dni') continue
      const path = `${f.name}.${s.name}`
      if (!s.encrypted) tests.push({ column: valueColumn(f), contains: { [s.name]: value } })
      else if (s.searchable) tests.push({ column: itemIndexColumn(f), contains: cipher.blindIndex(mod.name, path, value) })
      else { unsearchable.push(`${mod.name}.${path}`); continue }
      paths.push(path)
    }
  }
  return { tests, paths, unsearchable }
}

export async function searchPerson (em: Db, deps: PersonSearchDeps, caller: Caller, modules: readonly ModuleDef[], query: Record<string, unknown>, route: string): Promise<PersonAnswer> {
  if (!deps.access.protectsData(caller.rol)) throw new AppError('SIN_PERMISOS')
  for (const key of Object.keys(query)) if (key !== 'dni') throw invalid(key, 'parámetro desconocido: solo dni')
  const value = personDni(query.dni)
  const registros: PersonRecord[] = []
  const noBuscables: string[] = []
  for (const mod of modules) {
    const { tests, paths, unsearchable } = testsOf(mod, value, deps.cipher)
    noBuscables.push(...unsearchable)
    for (const row of await recordsHolding(em, mod.table, tests)) {
      registros.push({
        modulo: mod.name,
        id: row._id,
        campos: paths.filter((_, i) => row.met[i]),
        eliminado: row._deleted !== null,
        lecturas: await readsOfRecord(em, mod.name, row._id, READS_SHOWN, deps.timeZone),
      })
    }
  }
  // The search is a read of its own, named by the modules it found records in; the DNI is never logged.
  await logReads(em, [{ tipo: 'interesado', usuario: caller.id, fecha: nowSeconds(), modulo: '*', registro: '', campos: [...new Set(registros.map((r) => r.modulo))], ruta: route, coincidencias: registros.length }])
  return { registros, total: registros.length, no_buscables: noBuscables }
}
