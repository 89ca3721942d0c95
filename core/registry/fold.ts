/** ASCII folding of field names into column names: `compañero` → `companero`. */
export function foldToAscii (name: string): string {
  return name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-zA-Z0-9_]/g, '_').toLowerCase()
}
