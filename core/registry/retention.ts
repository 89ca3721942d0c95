/**
 * A module's `conservacion` (docs/administrator-guide.md "Personal data:
 * retention"): how long its records are kept before the data-protection
 * officer reviews them (docs/user-guide.md "Personal data"). `años` counts from `desde`, a date or
 * date-time field of the module or `_created` (the default); `estados`, when
 * given, limits the review to records in one of those states (a denuncia
 * still under investigation is not due).
 */
import { hint } from './suggest.js'
import { RegistryProblem } from './build.js'
import type { FieldDef, RetentionDef } from './types.js'

export interface RetentionFile { años: number, desde?: string, estados?: string[] }

export function retentionOf (declared: RetentionFile | undefined, fields: readonly FieldDef[], stateField: string | undefined, path: Array<string | number>): RetentionDef | undefined {
  if (declared === undefined) return undefined
  const from = declared.desde ?? '_created'
  if (from !== '_created') {
    const f = fields.find((x) => x.name === from)
    const dates = fields.filter((x) => x.type === 'date' || x.type === 'datetime').map((x) => x.name)
    if (f === undefined) throw new RegistryProblem([...path, 'desde'], `unknown field "${from}"${hint(from, [...dates, '_created'])}; "desde" is a date or datetime field, or _created`)
    if (!dates.includes(from)) throw new RegistryProblem([...path, 'desde'], `"${from}" is a ${f.type} field; "desde" is a date or datetime field, or _created`)
    if (f.encrypted) throw new RegistryProblem([...path, 'desde'], `"${from}" is encrypted and the daily review compares dates in the database; name a plain date field, or _created`)
  }
  let states: readonly string[] | undefined
  if (declared.estados !== undefined) {
    const values = fields.find((x) => x.name === stateField)?.enum
    if (values === undefined) throw new RegistryProblem([...path, 'estados'], '"estados" needs the module\'s "state_field"')
    states = Object.freeze(declared.estados.map((s, i) => {
      if (!values.includes(s)) throw new RegistryProblem([...path, 'estados', i], `"${s}" is not a state of ${stateField!}${hint(s, values)}`)
      return s
    }))
  }
  return Object.freeze({ years: declared.años, from, ...(states !== undefined && { states }) })
}
