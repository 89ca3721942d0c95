/**
 * What every printed record of this deployment looks like, read once at
 * start: the force's name and logo (FORCE_NAME, FORCE_LOGO;
 * docs/operator-guide.md "Printed records") and the embedded fonts (the
 * DejaVu family of the `dejavu-fonts-ttf` package). A logo that cannot be
 * read, or is no PNG or JPEG, stops the start with the fix.
 */
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { ConfigError } from '../../core/errors.js'
import type { DocumentStyle } from './pdf-page.js'

const LOGO_MAX_BYTES = 2 * 1024 * 1024
const require = createRequire(import.meta.url)
const font = (name: string): Buffer => readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${name}.ttf`))

export function loadDocumentStyle (printing: { readonly force: string, readonly logo?: string }): DocumentStyle {
  return {
    force: printing.force,
    ...(printing.logo !== undefined && { logo: readLogo(printing.logo) }),
    fonts: { regular: font('DejaVuSans'), bold: font('DejaVuSans-Bold'), mono: font('DejaVuSansMono') },
  }
}

function readLogo (path: string): Buffer {
  let bytes: Buffer
  try {
    if (statSync(path).size > LOGO_MAX_BYTES) throw new ConfigError(`FORCE_LOGO ${path} is larger than 2 MiB; use a smaller PNG or JPEG (a logo prints at about 4 cm wide)`)
    bytes = readFileSync(path)
  } catch (err) {
    if (err instanceof ConfigError) throw err
    throw new ConfigError(`FORCE_LOGO ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}); point it at a PNG or JPEG file the service can read, or unset it`)
  }
  const png = bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  const jpeg = bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff
  if (!png && !jpeg) throw new ConfigError(`FORCE_LOGO ${path} is neither a PNG nor a JPEG file; convert the logo to PNG (e.g. convert logo.svg logo.png) and point FORCE_LOGO at it`)
  return bytes
}
