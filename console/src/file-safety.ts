/**
 * Which evidence files the console may show, and as what
 * (docs/user-guide.md "Evidence files"; docs/decisions.md "No file becomes
 * an address the console's origin renders"). A file a browser would run
 * (SVG, HTML, XML, script) must never become a `blob:` or `data:` address
 * of this origin: opened in a tab, its script would run with the console's
 * rights. So only raster images and PDF are previewed, and only when the
 * declared type, the name's extension and the first bytes all agree; the
 * preview's blob takes the type the bytes show, never the declared one.
 * Every download is saved as `application/octet-stream`, which no browser renders.
 */

/** Types a preview may have: what the first bytes must show. */
const SIGNATURES: ReadonlyArray<{ type: string, at: number, bytes: readonly number[] }> = [
  { type: 'image/png', at: 0, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: 'image/jpeg', at: 0, bytes: [0xff, 0xd8, 0xff] },
  { type: 'image/gif', at: 0, bytes: [0x47, 0x49, 0x46, 0x38] },
  { type: 'image/webp', at: 8, bytes: [0x57, 0x45, 0x42, 0x50] },
  { type: 'application/pdf', at: 0, bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] },
]

/** Declared types that may be previewed, with the type their bytes must show. */
const PREVIEWABLE: Readonly<Record<string, string>> = {
  'image/png': 'image/png',
  'image/jpeg': 'image/jpeg',
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'image/gif': 'image/gif',
  'image/webp': 'image/webp',
  'application/pdf': 'application/pdf',
}

/** Extensions of files a browser runs or renders as a page, whatever their declared type. */
const ACTIVE_EXTENSION = /\.(svgz?|html?|xht(ml)?|shtml|mht(ml)?|xml|xsl[t]?|rdf|js|mjs|cjs|swf|hta|vbs|wsf)$/i

/** The type a preview would have (image or PDF), or undefined when the file gets none. */
export function previewType (nombre: string, tipo: string): string | undefined {
  if (ACTIVE_EXTENSION.test(nombre.trim())) return undefined
  return PREVIEWABLE[tipo.split(';')[0]!.trim().toLowerCase()]
}

/** The type the first bytes show, among those a preview may have. */
export function sniffedType (head: Uint8Array): string | undefined {
  return SIGNATURES.find((s) => head.length >= s.at + s.bytes.length && s.bytes.every((b, i) => head[s.at + i] === b))?.type
}

/**
 * The blob a preview shows: the bytes retyped as what they show, when that
 * is the type `previewType` expects; undefined otherwise (no preview).
 */
export async function previewBlob (blob: Blob, expected: string): Promise<Blob | undefined> {
  const shown = sniffedType(new Uint8Array(await blob.slice(0, 16).arrayBuffer()))
  return shown === expected ? blob.slice(0, blob.size, shown) : undefined
}

/** The bytes of a download as a blob no browser renders, whatever the file is. */
export function inertBlob (blob: Blob): Blob {
  return blob.slice(0, blob.size, 'application/octet-stream')
}
