/**
 * What a field or sub-field says to a person (docs/administrator-guide.md
 * "Labels"): its `label` (else its name), its `help`, and with `enum` the
 * label of every value (`enum_labels`, else the value itself). A key of
 * `enum_labels` that is no enum value of the field is refused with the
 * closest value; so is a label starting with `_`, which a CSV header would
 * read as a system column (records/import-source.ts).
 */
import type { FieldDef } from './types.js'
import type { FieldFile } from './schema.js'
import { hint } from './suggest.js'

type Labels = Pick<FieldDef, 'label' | 'help' | 'enumLabels'>

export function labelsOf (name: string, f: Pick<FieldFile, 'label' | 'help' | 'enum' | 'enum_labels'>, at: (key: Array<string | number>, message: string) => never): Labels {
  if (f.label?.startsWith('_') === true) at(['label'], `a label may not start with "_" (a CSV header's system columns do)`)
  const declared = f.enum_labels
  if (declared !== undefined) {
    if (f.enum === undefined) at(['enum_labels'], 'only fields with enum values take enum_labels')
    for (const value of Object.keys(declared)) {
      if (!f.enum!.includes(value)) at(['enum_labels', value], `"${value}" is not one of the enum values of ${name} (${f.enum!.join(', ')})${hint(value, f.enum!)}`)
    }
  }
  return {
    label: f.label ?? name,
    ...(f.help !== undefined && { help: f.help }),
    ...(f.enum !== undefined && { enumLabels: Object.freeze(Object.fromEntries(f.enum.map((v) => [v, declared?.[v] ?? v]))) }),
  }
}
