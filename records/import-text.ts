/**
 * An import's body as text (docs/user-guide.md "Import (importar)"):
 * decoded from its declared encoding — UTF-8 unless `codificacion` or the
 * Content-Type's charset says windows-1252 or iso-8859-1 (what Spanish
 * Excel writes) — and refused with 400 naming the first bad line when a
 * byte is not valid in it (never stored as U+FFFD), when a line holds a
 * NUL byte (UTF-16 or a binary file), or when a line is longer than
 * MAX_LINE_BYTES. Handed on in pieces of at most PIECE bytes that end at a
 * line break, so the parsers after it never take more than that at once.
 */
import { AppError } from '../core/errors.js'

export const IMPORT_ENCODINGS = ['utf-8', 'windows-1252', 'iso-8859-1'] as const
export type ImportEncoding = typeof IMPORT_ENCODINGS[number]

/** The longest line of a body (and CSV record, records/csv-dialect.ts): far above any module's widest row. */
export const MAX_LINE_BYTES = 1024 * 1024

/** Bytes decoded at a time: what the CSV parser then reads in one step (3,000 rows of `,,,,`, a few milliseconds). */
const PIECE = 16 * 1024
const LF = 0x0a
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf])

/**
 * windows-1252's characters for the bytes 0x80-0x9F, where it differs from
 * ISO-8859-1; '' for the five it does not define. By hand: Node 20's
 * TextDecoder('windows-1252') gives 0x80 as U+0080, not '€'.
 */
const CP1252_HIGH = [
  '€', '', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '', 'Ž', '',
  '', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '', 'ž', 'Ÿ',
]
const C1 = /[\x80-\x9f]/g

/**
 * Text of whole lines in `encoding`, or undefined when some byte is not
 * valid in it. `iso-8859-1` is read as windows-1252, as browsers do
 * (WHATWG Encoding): its 0x80-0x9F are control characters no one types,
 * and a file labelled so is in practice Excel's windows-1252 (`€` is 0x80).
 */
function decoderOf (encoding: ImportEncoding): (bytes: Buffer) => string | undefined {
  if (encoding === 'iso-8859-1' || encoding === 'windows-1252') {
    return (bytes) => {
      const text = bytes.toString('latin1')
      let bad = false
      const out = text.replace(C1, (c) => {
        const mapped = CP1252_HIGH[c.charCodeAt(0) - 0x80]!
        if (mapped === '') bad = true
        return mapped
      })
      return bad ? undefined : out
    }
  }
  // ignoreBOM: a BOM is kept as a character (the parsers drop the leading one), so one in the middle is not lost silently.
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  return (bytes) => {
    try { return utf8.decode(bytes) } catch { return undefined }
  }
}

const refused = (mensaje: string): AppError => new AppError('DATOS_INVALIDOS', [{ campo: 'body', mensaje }])

export function tooLong (line: number): AppError {
  return refused(`la línea ${line} supera el máximo de ${MAX_LINE_BYTES} bytes por línea`)
}

/** The line breaks in `bytes`, which starts at line `first`; each line checked against MAX_LINE_BYTES. */
function countLines (bytes: Buffer, first: number): number {
  let n = 0
  let start = 0
  for (let at = bytes.indexOf(LF); at !== -1; at = bytes.indexOf(LF, at + 1)) {
    if (at - start > MAX_LINE_BYTES) throw tooLong(first + n)
    n++
    start = at + 1
  }
  return n
}

/** The number of the line of `bytes` (which starts at line `first`) holding its byte `at`. */
function lineAt (bytes: Buffer, at: number, first: number): number {
  let n = first
  for (let i = bytes.indexOf(LF); i !== -1 && i < at; i = bytes.indexOf(LF, i + 1)) n++
  return n
}

/** The text of whole lines starting at line `first`, or the 400 of their first bad line. */
function decodeLines (bytes: Buffer, first: number, encoding: ImportEncoding, decode: (b: Buffer) => string | undefined): string {
  const nul = bytes.indexOf(0)
  if (nul !== -1) throw refused(`la línea ${lineAt(bytes, nul, first)} contiene un byte nulo (¿un fichero UTF-16 o binario?)`)
  const text = decode(bytes)
  if (text !== undefined) return text
  let line = first
  let start = 0
  for (;;) {
    const end = bytes.indexOf(LF, start)
    const one = bytes.subarray(start, end === -1 ? bytes.length : end + 1)
    if (decode(one) === undefined) {
      const hint = encoding === 'utf-8' ? ' (un fichero de Excel en español suele ser windows-1252: envíelo con ?codificacion=windows-1252)' : ''
      throw refused(`la línea ${line} no es texto ${encoding} válido${hint}`)
    }
    if (end === -1) throw refused(`la línea ${line} no es texto ${encoding} válido`) // a sequence cut by the end of the body
    line++
    start = end + 1
  }
}

/** The body's text in pieces that end at a line break (the last one may not), as it arrives. */
export async function * importText (input: AsyncIterable<Buffer | string>, encoding: ImportEncoding): AsyncGenerator<string> {
  const decode = decoderOf(encoding)
  // The start of a line not ended yet, in pieces (joined once, when it ends).
  let pending: Buffer[] = []
  let pendingBytes = 0
  let line = 1
  let started = false
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    for (let i = 0; i < bytes.length; i += PIECE) {
      const piece = bytes.subarray(i, i + PIECE)
      if (!started && encoding !== 'utf-8' && pendingBytes + piece.length >= 3) {
        started = true
        if (Buffer.concat([...pending, piece]).subarray(0, 3).equals(UTF8_BOM)) throw refused(`la línea 1 empieza con la marca de UTF-8 (BOM): el fichero es UTF-8, no ${encoding}`)
      }
      const cut = piece.lastIndexOf(LF) + 1
      if (cut === 0) {
        pending.push(Buffer.from(piece))
        pendingBytes += piece.length
        if (pendingBytes > MAX_LINE_BYTES) throw tooLong(line)
        continue
      }
      const whole = pendingBytes === 0 ? piece.subarray(0, cut) : Buffer.concat([...pending, piece.subarray(0, cut)])
      const lines = countLines(whole, line)
      const text = decodeLines(whole, line, encoding, decode)
      checkBom(text, line)
      line += lines
      pending = cut < piece.length ? [Buffer.from(piece.subarray(cut))] : []
      pendingBytes = piece.length - cut
      yield text
    }
  }
  if (pendingBytes > 0) {
    const text = decodeLines(Buffer.concat(pending), line, encoding, decode)
    checkBom(text, line)
    yield text
  }
}

/** A byte-order mark only starts the body: one starting a later line is two files joined (400 naming that line). */
function checkBom (text: string, first: number): void {
  let at = 0
  if (first === 1 || !text.startsWith('\uFEFF')) {
    at = text.indexOf('\n\uFEFF') + 1
    if (at === 0) return
  }
  let line = first
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++
  throw refused(`la línea ${line} empieza con una marca de orden de bytes (BOM), que solo puede abrir el fichero: ¿dos ficheros unidos?`)
}
