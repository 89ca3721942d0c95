/**
 * Reading a PDF the service printed as a person's tools would
 * (docs/testing.md "Printed records"): its text with Debian's poppler-utils
 * (`pdftotext`), a page rendered (`pdftoppm`) and its QR code decoded
 * (jsqr), its images listed (`pdfimages`). Without poppler-utils each
 * fails with the fix: a test that cannot read the PDF proves nothing.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
// A CommonJS package: its function is the module's `default` (TypeScript's NodeNext view and Node's agree on that one).
import jsqr from 'jsqr'

const HAS_POPPLER = spawnSync('pdftotext', ['-v']).status === 0

function withFile<T> (pdf: Buffer, use: (file: string, dir: string) => T): T {
  if (!HAS_POPPLER) throw new Error('pdftotext is missing: install Debian\'s poppler-utils (apt-get install poppler-utils) to read printed PDFs')
  const dir = mkdtempSync(join(tmpdir(), 'policia-pdf-'))
  try {
    const file = join(dir, 'doc.pdf')
    writeFileSync(file, pdf)
    return use(file, dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The PDF's text, in reading order. */
export function pdfText (pdf: Buffer): string {
  return withFile(pdf, (file) => execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8' }))
}

/** `pdfinfo`'s fields (Pages, Tagged, Title, Page size …). */
export function pdfInfo (pdf: Buffer): Record<string, string> {
  const out = withFile(pdf, (file) => execFileSync('pdfinfo', ['-enc', 'UTF-8', file], { encoding: 'utf8' }))
  return Object.fromEntries(out.split('\n').filter((l) => l.includes(':')).map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]))
}

/** The tagged structure as `pdfinfo -struct` prints it: one element per line, indented by depth. */
export function pdfStructure (pdf: Buffer): string {
  return withFile(pdf, (file) => execFileSync('pdfinfo', ['-struct', file], { encoding: 'utf8' }))
}

/** How many images `pdfimages -list` finds (each page's drawing of one counts; an image's transparency, its `smask`, does not). */
export function pdfImageCount (pdf: Buffer): number {
  const out = withFile(pdf, (file) => execFileSync('pdfimages', ['-list', file], { encoding: 'utf8' }))
  return out.trim().split('\n').slice(2).filter((line) => line.trim().split(/\s+/)[2] === 'image').length
}

/** One page rendered at `dpi` as PNG bytes. */
export function pdfPage (pdf: Buffer, page: number, dpi = 150): Buffer {
  return withFile(pdf, (file, dir) => {
    execFileSync('pdftoppm', ['-png', '-r', String(dpi), '-f', String(page), '-l', String(page), '-singlefile', file, join(dir, 'page')])
    return readFileSync(join(dir, 'page.png'))
  })
}

/** The text of the QR code on a page (the last one by default), or undefined when none decodes. */
export function pdfQr (pdf: Buffer, page = Number(pdfInfo(pdf).Pages)): string | undefined {
  const png = PNG.sync.read(pdfPage(pdf, page))
  return jsqr.default(new Uint8ClampedArray(png.data), png.width, png.height)?.data
}
