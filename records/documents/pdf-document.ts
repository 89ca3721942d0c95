/**
 * A printed record laid out as a PDF (docs/user-guide.md "Printed
 * records") with pdfkit, on the pages pdf-page.ts makes (A4, the force's
 * name and logo atop every page, "Página i de n" at the foot): the
 * record's fields by label, then the verification block (the seal, the
 * signed code and its QR code). The text is real text in an embedded font
 * (DejaVu, which has every Spanish letter and most others), so `pdftotext`
 * and a search read it; the PDF is tagged (headings, a list of label and
 * value, the code, the QR code as a figure with its alternative text;
 * header and foot as artifacts).
 */
import QRCode from 'qrcode'
import { printedCode } from './document-code.js'
import { furniture, GREY, MARGIN, openPdf, type Doc, type DocumentStyle, type Struct } from './pdf-page.js'
import type { PrintedRecord } from './printed-record.js'

export interface PrintOccasion {
  /** The signed verification code (records/documents/document-code.ts). */
  readonly code: string
  /** When and by whom, as printed: `29/11/2026 10:30`, a username. */
  readonly printedAt: string
  readonly printedBy: string
}

const QR_SIZE = 118

export async function renderPdf (rec: PrintedRecord, occasion: PrintOccasion, style: DocumentStyle): Promise<Buffer> {
  const { doc, done } = openPdf({ title: `${rec.title} ${rec.id}`, subject: `Versión ${rec.version}` }, style)

  const root = doc.struct('Document')
  doc.addStructure(root)
  const width = doc.page.width - MARGIN.left - MARGIN.right
  const para = (type: 'H1' | 'H2' | 'P', font: string, size: number, text: string, color = 'black'): void => {
    root.add(doc.struct(type, {}, () => { doc.font(font).fontSize(size).fillColor(color).text(text, { width }) }))
  }

  para('H1', 'negrita', 20, rec.title)
  para('P', 'texto', 11, `Registro ${rec.id} · versión ${rec.version}`)
  para('P', 'texto', 9, `Creado el ${rec.created} · versión de ${rec.modified}`, GREY)
  doc.moveDown(0.8)

  const list = doc.struct('L')
  root.add(list)
  for (const f of rec.fields) {
    list.add(doc.struct('LI', {}, [
      doc.struct('Lbl', {}, () => { doc.font('negrita').fontSize(9).fillColor(GREY).text(f.label, { width }) }),
      doc.struct('LBody', {}, () => { doc.font('texto').fontSize(11).fillColor('black').text(f.value, { width }); doc.moveDown(0.45) }),
    ]))
  }
  list.end()

  verification(doc, root, rec, occasion, width)
  root.end()
  furniture(doc, `${rec.title} ${rec.id} · versión ${rec.version}`, style)
  doc.end()
  return done
}

/** The seal, the code and its QR code, kept on one page. */
function verification (doc: Doc, root: Struct, rec: PrintedRecord, occasion: PrintOccasion, width: number): void {
  const qr = QRCode.create(occasion.code, { errorCorrectionLevel: 'M' })
  const textWidth = width - QR_SIZE - 16
  const gap = doc.currentLineHeight(true) * 0.4
  const parts: Array<readonly ['H2' | 'P' | 'Code', string, number, string, string?]> = [
    ['H2', 'negrita', 13, 'Verificación de esta copia'],
    ['P', 'texto', 9, 'Esta copia reproduce la versión indicada del registro. El código y el código QR llevan su identificador, su versión y su sello, firmados con la clave de la fuerza (Ed25519). ' +
      'Compruébelos en el servicio de registros (POST /documentos/verificar) o sin conexión con la clave pública publicada (npm run verificar-documento).', GREY],
    ['P', 'negrita', 9, 'Sello de la versión (SHA-256)'],
    ['Code', 'fija', 8.5, rec.hash],
    ['P', 'negrita', 9, 'Código de verificación'],
    ['Code', 'fija', 8.5, printedCode(occasion.code)],
    ['P', 'texto', 9, `Impreso el ${occasion.printedAt} por ${occasion.printedBy}`, GREY],
  ]
  const height = parts.reduce((sum, [, font, size, value]) => sum + doc.font(font).fontSize(size).heightOfString(value, { width: textWidth }) + gap, doc.currentLineHeight(true))
  if (doc.y + Math.max(height, QR_SIZE) > doc.page.height - MARGIN.bottom) doc.addPage()
  else doc.moveDown(0.8)
  const top = doc.y
  for (const [type, font, size, value, color] of parts) {
    root.add(doc.struct(type, {}, () => { doc.font(font).fontSize(size).fillColor(color ?? 'black').text(value, { width: textWidth }) }))
    if (type !== 'H2') doc.moveDown(0.3)
  }
  const x = doc.page.width - MARGIN.right - QR_SIZE
  root.add(doc.struct('Figure', { alt: `Código QR con el código de verificación ${occasion.code}` }, () => { drawQr(doc, qr.modules, x, top) }))
}

/** Dark modules as filled squares, one rectangle per run of a row; a quiet zone of white around. */
function drawQr (doc: Doc, modules: { size: number, get (row: number, col: number): number | boolean }, x: number, y: number): void {
  const cell = QR_SIZE / (modules.size + 8)
  const left = x + 4 * cell
  const top = y + 4 * cell
  for (let r = 0; r < modules.size; r++) {
    let c = 0
    while (c < modules.size) {
      if (!modules.get(r, c)) { c++; continue }
      const start = c
      while (c < modules.size && modules.get(r, c)) c++
      doc.rect(left + start * cell, top + r * cell, (c - start) * cell, cell)
    }
  }
  doc.fillColor('black').fill()
}
