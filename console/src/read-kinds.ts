/**
 * A read-log entry's kind as the console names it (docs/user-guide.md
 * "Personal data"; docs/operator-guide.md "Read log"): a record's
 * Accesos and a person's search on the Protección de datos screen. The
 * names are the service's (core/read-kind-names.ts), as its printed report says them.
 */
import { READ_KIND_NAMES } from '../../core/read-kind-names.js'

const KINDS: Readonly<Record<string, string>> = READ_KIND_NAMES

/** `lectura` → `Lectura de datos cifrados`; a kind the console does not know, as it is. */
export function readKind (tipo: string): string {
  return KINDS[tipo] ?? tipo
}
