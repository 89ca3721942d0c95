/**
 * The texts of core/errors.ts are the documented ones. Integration tests
 * take every error and success text from core/errors.ts by its code
 * (test/helpers/errors.ts), so this file is where a changed text fails: the
 * error table against docs/user-guide.md "Errors", the success texts
 * against the endpoint table of docs/user-guide.md, and the texts the docs
 * do not quote, written out.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERRORS, MESSAGES } from '../../core/errors.js'

const guide = readFileSync(resolve(import.meta.dirname, '../../docs/user-guide.md'), 'utf8')

/** The rows of the table under `## Errors`: [code, status, text]. */
function documentedErrors (): Array<[string, number, string]> {
  const section = guide.split(/^## Errors$/m)[1]!.split(/^## /m)[0]!
  return section.split('\n')
    .map((line) => /^\|[^|]*\|\s*(\d{3})\s*\|\s*`([^`]+)`[^|]*\|\s*`([A-Z_]+)`\s*\|$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => [m[3]!, Number(m[1]), m[2]!])
}

describe('core/errors.ts', () => {
  it('ERRORS is the table of docs/user-guide.md "Errors": code (`codigo`), status and text', () => {
    const table = Object.entries(ERRORS).map(([code, e]) => [code, e.status, e.message])
    const sort = (rows: unknown[][]): string[] => rows.map((r) => JSON.stringify(r)).sort()
    expect(sort(table)).toEqual(sort(documentedErrors()))
  })

  it('the success texts are the documented ones', () => {
    expect(guide).toContain(`200 \`{message: "${MESSAGES.SESION_CERRADA}"}\``)
    expect(guide).toContain(`200 \`{message: "${MESSAGES.REGISTRO_ELIMINADO}"}\``)
    // Not quoted by the docs: written out here.
    expect(MESSAGES.CONTRASENA_CAMBIADA).toBe('Contraseña cambiada; las demás sesiones se han cerrado')
    expect(MESSAGES.SESIONES_CERRADAS).toBe('Sesiones del usuario cerradas')
    expect(MESSAGES.USUARIO_DESBLOQUEADO).toBe('Bloqueo de inicio de sesión levantado')
  })
})
