/**
 * A read-log entry's kind as the console names it (docs/user-guide.md
 * "Personal data"; docs/operator-guide.md "Read log"): a record's
 * Accesos and a person's search on the Protección de datos screen.
 */
const KINDS: Record<string, string> = {
  lectura: 'Lectura de datos cifrados',
  documento: 'Copia impresa',
  descarga: 'Descarga de un archivo cifrado',
  acceso: 'Descarga de un archivo',
  bloqueado: 'Lectura del registro bloqueado',
  busqueda: 'Búsqueda',
  exportar: 'Exportación',
  interesado: 'Búsqueda de un interesado',
}

/** `lectura` → `Lectura de datos cifrados`; a kind the console does not know, as it is. */
export function readKind (tipo: string): string {
  return KINDS[tipo] ?? tipo
}
