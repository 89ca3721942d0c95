/**
 * The read log's kinds (docs/operator-guide.md "Read log") as a person of
 * the force reads them: in a record's Accesos and a person's search in the
 * console, and in a person's printed report. Pure data, which the console
 * bundles too, so both say the same.
 */
export const READ_KIND_NAMES = Object.freeze({
  lectura: 'Lectura de datos cifrados',
  documento: 'Copia impresa',
  descarga: 'Descarga de un archivo cifrado',
  acceso: 'Descarga de un archivo',
  bloqueado: 'Lectura del registro bloqueado',
  busqueda: 'Búsqueda',
  exportar: 'Exportación',
  interesado: 'Búsqueda de un interesado',
})
