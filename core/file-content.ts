/**
 * What an evidence file's bytes and name may be (docs/user-guide.md
 * "Evidence files"): the name cleaned, the declared type checked against
 * the type its first bytes show, and how a download is presented (inline
 * only for types a browser shows without running anything). Pure.
 */

/** The signatures this service tells apart: enough to catch a declared type that lies. */
const SIGNATURES: ReadonlyArray<{ type: string, at?: number, bytes: readonly number[] }> = [
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
  { type: 'image/gif', bytes: [0x47, 0x49, 0x46, 0x38] },
  { type: 'image/webp', at: 8, bytes: [0x57, 0x45, 0x42, 0x50] },
  { type: 'image/bmp', bytes: [0x42, 0x4d] },
  { type: 'image/tiff', bytes: [0x49, 0x49, 0x2a, 0x00] },
  { type: 'image/tiff', bytes: [0x4d, 0x4d, 0x00, 0x2a] },
  { type: 'application/pdf', bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] },
  { type: 'application/zip', bytes: [0x50, 0x4b, 0x03, 0x04] },
  { type: 'application/gzip', bytes: [0x1f, 0x8b] },
  { type: 'audio/mpeg', bytes: [0x49, 0x44, 0x33] },
  { type: 'audio/ogg', bytes: [0x4f, 0x67, 0x67, 0x53] },
  { type: 'video/webm', bytes: [0x1a, 0x45, 0xdf, 0xa3] },
  { type: 'video/mp4', at: 4, bytes: [0x66, 0x74, 0x79, 0x70] },
  { type: 'application/x-msdownload', bytes: [0x4d, 0x5a] },
  { type: 'application/x-executable', bytes: [0x7f, 0x45, 0x4c, 0x46] },
]

/** Declared types a signature also stands for (a .docx is a zip; a .mov, an .m4a a ftyp box). */
const FAMILY: Readonly<Record<string, readonly string[]>> = {
  'application/zip': ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation', 'application/vnd.oasis.opendocument.text',
    'application/vnd.oasis.opendocument.spreadsheet', 'application/epub+zip', 'application/x-zip-compressed'],
  'video/mp4': ['video/quicktime', 'audio/mp4', 'audio/x-m4a', 'video/3gpp', 'image/heic', 'image/avif'],
  'audio/ogg': ['video/ogg', 'application/ogg'],
  'video/webm': ['audio/webm', 'video/x-matroska'],
  'application/gzip': ['application/x-gzip'],
  'image/jpeg': ['image/jpg', 'image/pjpeg'],
}

/**
 * The types an upload's document names (docs/user-guide.md "Evidence
 * files"): `application/octet-stream` first, which declares nothing and so
 * stands for any type (the bytes then tell it, `recordedType`), then those
 * whose bytes this service checks, their families and plain text. Any
 * other media type is taken too; a generated client sends the first.
 */
export const NAMED_UPLOAD_TYPES: readonly string[] = [...new Set(['application/octet-stream',
  ...SIGNATURES.map((s) => s.type), ...Object.values(FAMILY).flat(), 'text/plain'])]

/** Types a browser would run or render as a page: never inline, and never accepted under another name. */
const ACTIVE = new Set(['text/html', 'application/xhtml+xml', 'image/svg+xml', 'text/javascript', 'application/javascript',
  'application/ecmascript', 'text/ecmascript', 'application/xml', 'text/xml', 'text/xsl', 'application/x-shockwave-flash'])

/** Types shown inline (previews): images a browser draws, PDF, audio, video, plain text. */
const INLINE = /^(image\/(png|jpeg|gif|webp|bmp|avif)|application\/pdf|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+|text\/plain)$/

const TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/

/** A declared Content-Type as recorded: lower case, without parameters; undefined when it is no media type. */
export function declaredType (header: string | undefined): string | undefined {
  const t = (header ?? 'application/octet-stream').split(';')[0]!.trim().toLowerCase()
  return TYPE.test(t) ? t : undefined
}

const MARKUP = /^\s*(<\?xml|<!doctype\s+(html|svg)|<(html|head|body|script|svg|iframe|object|embed|meta|link|style|title|a\s|img\s|div|p>|table))/i

/** The type the first bytes show, or undefined when they show none this service knows. */
export function sniffType (head: Buffer): string | undefined {
  for (const s of SIGNATURES) {
    const at = s.at ?? 0
    if (head.length >= at + s.bytes.length && s.bytes.every((b, i) => head[at + i] === b)) return s.type
  }
  // Text that a browser would take for a page or an image it runs (a BOM first is allowed).
  const text = head.subarray(0, 1024).toString('latin1').replace(/^\xef\xbb\xbf/, '')
  if (MARKUP.test(text)) return /<svg/i.test(text) ? 'image/svg+xml' : /^\s*<\?xml/i.test(text) ? 'application/xml' : 'text/html'
  return undefined
}

/**
 * Whether the declared type and the sniffed one disagree: a known
 * signature must be the declared type (or of its family); markup may only
 * be declared as active content (served as an attachment); a declared type
 * that has a signature must show it. `application/octet-stream` declares nothing.
 */
export function typeMismatch (declared: string, sniffed: string | undefined): boolean {
  if (declared === 'application/octet-stream') return false
  if (sniffed === undefined) return Object.hasOwn(FAMILY, declared) || SIGNATURES.some((s) => s.type === declared)
  if (sniffed === declared) return false
  if (ACTIVE.has(sniffed)) return !ACTIVE.has(declared)
  return !(FAMILY[sniffed]?.includes(declared) ?? false)
}

/** The type recorded: the declared one, or what the bytes show when the client declared none. */
export function recordedType (declared: string, sniffed: string | undefined): string {
  return declared === 'application/octet-stream' && sniffed !== undefined ? sniffed : declared
}

/** Whether a download of `type` may be shown inline; active content is always an attachment. */
export function showsInline (type: string): boolean {
  return !ACTIVE.has(type) && INLINE.test(type)
}

/** Characters no file name keeps: path separators, controls, and what shells and Windows refuse. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f/\\:*?"<>|\u202a-\u202e\u2066-\u2069]/g

/** A file name fit to store and send back: no path, no controls, no leading dots, at most 255 characters; empty: undefined. */
export function sanitizeFileName (raw: string): string | undefined {
  const base = raw.normalize('NFC').split(/[/\\]/).pop() ?? ''
  const clean = base.replace(UNSAFE, '_').replace(/^[.\s]+/, '').replace(/[.\s]+$/, '').slice(0, 255)
  return clean === '' ? undefined : clean
}

/** `Content-Disposition` of a download (RFC 6266): an ASCII fallback and the UTF-8 name. */
export function contentDisposition (name: string, inline: boolean): string {
  const ascii = name.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/["\\%]/g, '_') || 'archivo'
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encoded}`
}
