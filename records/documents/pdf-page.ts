/**
 * What every PDF the service prints shares (docs/user-guide.md "Printed
 * records", "Personal data"), whatever it says: an A4 tagged document in
 * Spanish with the DejaVu fonts embedded (`texto`, `negrita`, `fija`), its
 * margins, and on every page the force's name and logo atop and a foot
 * line with "Página i de n", drawn as artifacts outside the text's flow.
 * A printed record (pdf-document.ts) and a person's report
 * (person-report.ts) lay out their own content between them.
 */
import PDFDocument from 'pdfkit'

/** The fonts and the force's identity, read once at start (plugins/documents.ts). */
export interface DocumentStyle {
  readonly force: string
  /** PNG or JPEG bytes. */
  readonly logo?: Buffer
  readonly fonts: { readonly regular: Buffer, readonly bold: Buffer, readonly mono: Buffer }
}

export type Doc = PDFKit.PDFDocument
export type Struct = PDFKit.PDFStructureElement

export const MARGIN = { top: 92, bottom: 72, left: 56, right: 56 }
export const GREY = '#444444'

/** A new document with the fonts registered, and its bytes once `doc.end()` is called. */
export function openPdf (info: { readonly title: string, readonly subject: string }, style: DocumentStyle): { doc: Doc, done: Promise<Buffer> } {
  const doc = new PDFDocument({
    size: 'A4',
    margins: MARGIN,
    bufferPages: true,
    tagged: true,
    lang: 'es-ES',
    displayTitle: true,
    pdfVersion: '1.7',
    info: { Title: info.title, Subject: info.subject, Author: style.force, Creator: style.force },
  })
  const chunks: Buffer[] = []
  doc.on('data', (c: Buffer) => chunks.push(c))
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => { resolve(Buffer.concat(chunks)) })
    doc.on('error', reject)
  })
  doc.registerFont('texto', style.fonts.regular)
  doc.registerFont('negrita', style.fonts.bold)
  doc.registerFont('fija', style.fonts.mono)
  return { doc, done }
}

/** Every page's header (logo, force) and foot (what the document is, page i of n), once the content is laid out. */
export function furniture (doc: Doc, foot: string, style: DocumentStyle): void {
  const { start, count } = doc.bufferedPageRange()
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i)
    const bottom = doc.page.margins.bottom
    doc.page.margins.bottom = 0
    doc.markContent('Artifact', { type: 'Pagination' })
    let textLeft = MARGIN.left
    if (style.logo !== undefined) {
      doc.image(style.logo, MARGIN.left, 28, { fit: [120, 44] })
      textLeft += 132
    }
    doc.font('negrita').fontSize(12).fillColor('black').text(style.force, textLeft, 40, { width: doc.page.width - textLeft - MARGIN.right, lineBreak: false })
    doc.moveTo(MARGIN.left, 78).lineTo(doc.page.width - MARGIN.right, 78).lineWidth(0.5).strokeColor(GREY).stroke()
    const footY = doc.page.height - 48
    const footWidth = doc.page.width - MARGIN.left - MARGIN.right
    doc.font('texto').fontSize(8.5).fillColor(GREY)
    doc.text(foot, MARGIN.left, footY, { width: footWidth, lineBreak: false })
    doc.text(`Página ${i - start + 1} de ${count}`, MARGIN.left, footY, { width: footWidth, align: 'right', lineBreak: false })
    doc.endMarkedContent()
    doc.page.margins.bottom = bottom
  }
}
