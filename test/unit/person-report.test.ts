/**
 * The person report's layout (records/documents/person-report.ts) on an
 * answer made here, as pdftotext reads it: modules and fields by their
 * labels in modules.yaml, sub-fields as "Testigos › DNI", the reads the
 * search carries and their total, a table that runs over pages with the
 * pages numbered, and the fields that cannot be searched listed last.
 */
import { describe, expect, it } from 'vitest'
import { loadRegistry } from '../../core/registry/load.js'
import type { PersonAnswer } from '../../records/data-protection/interested-party.js'
import type { ReadLogView } from '../../records/read-log.js'
import { loadDocumentStyle } from '../../records/documents/document-style.js'
import { renderPersonReport } from '../../records/documents/person-report.js'
import { pdfInfo, pdfText } from '../helpers/pdf.js'

const registry = loadRegistry('modules.yaml')
const style = loadDocumentStyle({ force: 'Policía Local de Villanueva del Ñandú' })

const reads = (n: number): ReadLogView[] => Array.from({ length: n }, (_, i) => ({
  tipo: i % 2 === 0 ? 'lectura' : 'documento', usuario: `USR-2026-${String(i).padStart(5, '0')}`, fecha: '2026-11-02 09:14:55', modulo: 'sanciones', registro: 'SAN-2026-00007', campos: [], ruta: 'GET /sanciones/:id',
}))

const ANSWER: PersonAnswer = {
  registros: [
    { modulo: 'denuncias', id: 'DEN-2026-00031', campos: ['denunciante_dni', 'testigos.dni'], eliminado: true, lecturas: { total: 0, records: [] } },
    { modulo: 'sanciones', id: 'SAN-2026-00007', campos: ['infractor_dni'], eliminado: false, lecturas: { total: 250, records: reads(100) } },
  ],
  total: 2,
  no_buscables: ['atestados.imputados', 'denuncias.testigos.dni'],
}

describe('the person report', () => {
  it('says each record by its labels, its reads and their total, over numbered pages, and the fields no search reaches last', async () => {
    const pdf = await renderPersonReport(ANSWER, '11111111H', registry.byName, { printedAt: '30/11/2026 10:30', printedBy: 'delegada' }, style)
    const pages = Number(pdfInfo(pdf).Pages)
    expect(pages).toBeGreaterThan(1)
    const flat = pdfText(pdf).replace(/\s+/g, ' ')
    for (const expected of ['Policía Local de Villanueva del Ñandú', 'Datos personales de un interesado', 'DNI o NIE buscado: 11111111H', 'Impreso el 30/11/2026 10:30 por delegada',
      '2 registros guardan este DNI.', 'Denuncias DEN-2026-00031 Eliminado Guarda el DNI en: DNI del denunciante, Testigos › DNI', 'Lecturas: ninguna en el registro de lecturas.',
      'Sanciones SAN-2026-00007 Guarda el DNI en: DNI del infractor', 'Lecturas: 250; las 100 más recientes, la última primero.',
      '02/11/2026 09:14:55 USR-2026-00000 Lectura de datos cifrados', '02/11/2026 09:14:55 USR-2026-00099 Copia impresa',
      'Campos de DNI que no se pueden buscar', '• Atestados: Imputados', '• Denuncias: Testigos › DNI',
      'Datos personales de un interesado · DNI 11111111H', `Página ${pages} de ${pages}`]) {
      expect(flat).toContain(expected)
    }
    expect(flat.indexOf('Campos de DNI que no se pueden buscar')).toBeGreaterThan(flat.indexOf('USR-2026-00099'))
  })

  it('says so when no record holds the DNI, and lists no unsearchable fields when there are none', async () => {
    const pdf = await renderPersonReport({ registros: [], total: 0, no_buscables: [] }, 'X1234567L', registry.byName, { printedAt: '30/11/2026 10:30', printedBy: 'delegada' }, style)
    const flat = pdfText(pdf).replace(/\s+/g, ' ')
    expect(flat).toContain('Ningún registro guarda este DNI.')
    expect(flat).not.toContain('no se pueden buscar')
    expect(flat).toContain('Página 1 de 1')
  })
})
