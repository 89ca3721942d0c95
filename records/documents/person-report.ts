/**
 * The data-protection officer's report on one person (docs/user-guide.md
 * "Personal data"): GET /proteccion-datos/interesado's answer as a PDF a
 * person reads, on the pages every printed document shares (pdf-page.ts).
 * The DNI searched for, when and by whom it was printed, then each record
 * holding it: its module's label and id, "Eliminado" when deleted, where it
 * holds the DNI (fields and sub-fields by their labels) and who read it
 * (the latest reads the search carries, and their total); last, the fields
 * of format dni that cannot be searched. Tagged like a printed record:
 * headings, paragraphs, a table of reads per record, a list.
 */
import { READ_KIND_NAMES } from '../../core/read-kind-names.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { dateText } from '../../core/spanish-text.js'
import type { ReadLogKind } from '../../db/read-log-entity.js'
import type { PersonAnswer } from '../data-protection/interested-party.js'
import { furniture, GREY, MARGIN, openPdf, type Doc, type DocumentStyle, type Struct } from './pdf-page.js'

const PERSON_REPORT_TITLE = 'Datos personales de un interesado'

/** When and by whom, as printed: `30/11/2026 10:30`, a username. */
export interface ReportOccasion {
  readonly printedAt: string
  readonly printedBy: string
}

/** What each kind of read-log entry is called in the report, as the console names it; typed so that every kind has one. */
const KINDS: Readonly<Record<ReadLogKind, string>> = READ_KIND_NAMES

/** `testigos.dni` → `Testigos › DNI`, by the labels modules.yaml gives; a name the module does not know stays as it is. */
function pathLabel (mod: ModuleDef | undefined, path: string): string {
  const [name = path, sub] = path.split('.')
  const field = mod?.fieldMap.get(name)
  if (field === undefined) return path
  if (sub === undefined) return field.label
  return `${field.label} › ${field.items?.find((s) => s.name === sub)?.label ?? sub}`
}

/** `denuncias.testigos.dni` (an entry of `no_buscables`) → `Denuncias: Testigos › DNI`. */
function qualifiedLabel (modules: ReadonlyMap<string, ModuleDef>, qualified: string): string {
  const dot = qualified.indexOf('.')
  const mod = modules.get(qualified.slice(0, dot))
  return mod === undefined ? qualified : `${mod.label}: ${pathLabel(mod, qualified.slice(dot + 1))}`
}

function countText (total: number): string {
  if (total === 0) return 'Ningún registro guarda este DNI.'
  return total === 1 ? 'Un registro guarda este DNI.' : `${total} registros guardan este DNI.`
}

function readsText (total: number, shown: number): string {
  if (total === 0) return 'Lecturas: ninguna en el registro de lecturas.'
  if (total === 1) return 'Lecturas: una.'
  return shown < total ? `Lecturas: ${total}; las ${shown} más recientes, la última primero.` : `Lecturas: ${total}, la última primero.`
}

export async function renderPersonReport (answer: PersonAnswer, dni: string, modules: ReadonlyMap<string, ModuleDef>, occasion: ReportOccasion, style: DocumentStyle): Promise<Buffer> {
  const { doc, done } = openPdf({ title: PERSON_REPORT_TITLE, subject: `DNI ${dni}` }, style)
  const root = doc.struct('Document')
  doc.addStructure(root)
  const width = doc.page.width - MARGIN.left - MARGIN.right
  const para = (type: 'H1' | 'H2' | 'P', font: string, size: number, text: string, color = 'black'): void => {
    root.add(doc.struct(type, {}, () => { doc.font(font).fontSize(size).fillColor(color).text(text, { width }) }))
  }

  para('H1', 'negrita', 20, PERSON_REPORT_TITLE)
  para('P', 'texto', 11, `DNI o NIE buscado: ${dni}`)
  para('P', 'texto', 9, `Impreso el ${occasion.printedAt} por ${occasion.printedBy}`, GREY)
  doc.moveDown(0.6)
  para('P', 'texto', 11, countText(answer.total))

  for (const rec of answer.registros) {
    const mod = modules.get(rec.modulo)
    doc.moveDown(0.8)
    keepWithNext(doc, 90)
    para('H2', 'negrita', 13, `${mod?.label ?? rec.modulo} ${rec.id}`)
    doc.moveDown(0.2)
    if (rec.eliminado) para('P', 'negrita', 10, 'Eliminado')
    para('P', 'texto', 10, `Guarda el DNI en: ${rec.campos.map((c) => pathLabel(mod, c)).join(', ')}`)
    para('P', 'texto', 10, readsText(rec.lecturas.total, rec.lecturas.records.length))
    if (rec.lecturas.records.length > 0) {
      doc.moveDown(0.3)
      readsTable(doc, root, rec.lecturas.records.map((r) => [dateText(r.fecha), r.usuario, KINDS[r.tipo]]), width)
    }
  }

  if (answer.no_buscables.length > 0) {
    doc.moveDown(1)
    keepWithNext(doc, 90)
    para('H2', 'negrita', 13, 'Campos de DNI que no se pueden buscar')
    doc.moveDown(0.2)
    para('P', 'texto', 9, 'Están cifrados sin índice ciego (searchable en modules.yaml): esta búsqueda no los alcanza, y un registro que guarde el DNI en ellos no aparece arriba.', GREY)
    doc.moveDown(0.3)
    const list = doc.struct('L')
    root.add(list)
    for (const name of answer.no_buscables) {
      list.add(doc.struct('LI', {}, [doc.struct('LBody', {}, () => { doc.font('texto').fontSize(10).fillColor('black').text(`• ${qualifiedLabel(modules, name)}`, { width }) })]))
    }
    list.end()
  }

  root.end()
  furniture(doc, `${PERSON_REPORT_TITLE} · DNI ${dni}`, style)
  doc.end()
  return done
}

/** A heading and the first lines under it start a page together. */
function keepWithNext (doc: Doc, height: number): void {
  if (doc.y + height > doc.page.height - MARGIN.bottom) doc.addPage()
}

/** One record's reads as a tagged table (Table, TR, TH, TD): date, user, kind. */
function readsTable (doc: Doc, root: Struct, rows: ReadonlyArray<readonly [string, string, string]>, width: number): void {
  const header = ['Fecha', 'Usuario', 'Tipo'].map((text) => ({ text, type: 'TH' as const, scope: 'Column', font: { src: 'negrita', size: 9 }, textColor: GREY }))
  // pdfkit's table tags itself under `structParent`, which its type definitions leave out.
  const options = {
    structParent: root,
    maxWidth: width,
    columnStyles: [120, 150, '*'],
    defaultStyle: { font: { src: 'texto', size: 9 }, padding: [2, 4], border: 0.5, borderColor: '#bbbbbb' },
    data: [header, ...rows.map((r) => [...r])],
  } as PDFKit.Mixins.TableOptionsWithData
  doc.fillColor('black').table(options)
  doc.x = MARGIN.left
}
