/**
 * A field's `format:` (docs/administrator-guide.md "modules.yaml reference"):
 * a known name, declared on the one type it is for (`dni`, `telefono` on a
 * string, `euros` on a decimal), and for a checked shape no `pattern` or `enum`
 * beside it and a default that fits.
 */
import type { FieldFile } from './schema.js'
import { hint } from './suggest.js'
import { Rejected } from '../field-types/types.js'
import { FIELD_FORMATS, FORMATS, type FieldFormat } from '../field-types/formats/index.js'

/** The declared format, or throws through `at` (the key and the problem). */
export function checkedFormat (f: Pick<FieldFile, 'type' | 'format' | 'pattern' | 'enum' | 'default'>, at: (key: string, message: string) => never): FieldFormat | undefined {
  if (f.format === undefined) return undefined
  if (!(FIELD_FORMATS as readonly string[]).includes(f.format)) at('format', `unknown format "${f.format}"${hint(f.format, FIELD_FORMATS)}; formats are ${FIELD_FORMATS.join(', ')}`)
  const format = f.format as FieldFormat
  const impl = FORMATS[format]
  if (f.type !== impl.type) at('format', `format ${format} is for ${impl.type} fields (this one is ${f.type})`)
  if (impl.type !== 'string') return format
  if (f.pattern !== undefined || f.enum !== undefined) at('format', `a field with a format takes no ${f.pattern !== undefined ? 'pattern' : 'enum'} (the format says what it accepts)`)
  const checked = typeof f.default === 'string' ? impl.check(f.default) : undefined
  if (checked instanceof Rejected) at('default', `default "${String(f.default)}" does not fit format ${format}: ${checked.mensaje}`)
  return format
}
