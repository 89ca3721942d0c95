/**
 * Passwords: how one is stored (Argon2id) and which ones the service
 * refuses wherever a password is set (docs/user-guide.md "Accounts and sessions"): the
 * placeholders its own documentation shows (deploy/env.example, README.md, docs/)
 * and the commonest defaults, compared ignoring case and surrounding
 * spaces, and the account's own username. docs/user-guide.md "Authentication and
 * roles" lists them; keep the two in step.
 *
 * The hashing is computation, not I/O (the library hashes on libuv's
 * thread pool), so it belongs in core/ beside the rules.
 */
import { hash as argon2Hash } from '@node-rs/argon2'

/** Argon2id with the library's defaults (m=19 MiB, t=2, p=1), as OWASP advises. */
export function hashPassword (plain: string): Promise<string> {
  return argon2Hash(plain, { algorithm: 2 })
}

export const PLACEHOLDER_PASSWORDS: readonly string[] = [
  'password', 'password123', 'contraseña', 'contraseña123', 'contrasena', 'contrasena123',
  'changeme', 'change_me', 'change-me', 'change_me_at_least_10', 'cambiame', 'cambia-esto', 'cambiar',
  '12345678', '123456789', '1234567890', 'admin', 'admin123', 'administrador', 'qwerty123',
]

const PLACEHOLDERS = new Set(PLACEHOLDER_PASSWORDS.map((p) => p.toLowerCase()))

export interface PasswordProblem {
  /** For the client (`detalles[].mensaje`). */
  readonly mensaje: string
  /** For the operator (start-up, command line). */
  readonly operator: string
}

/**
 * Why `password` may not be used by `username`, or undefined when it may
 * (`minLength`/`maxLength`: the users module's password field).
 */
export function passwordProblem (password: string, username: string | undefined, limits: { minLength?: number, maxLength?: number }): PasswordProblem | undefined {
  const length = [...password].length
  if (limits.minLength !== undefined && length < limits.minLength) return { mensaje: `debe tener al menos ${limits.minLength} caracteres`, operator: `is shorter than ${limits.minLength} characters` }
  if (limits.maxLength !== undefined && length > limits.maxLength) return { mensaje: `admite como máximo ${limits.maxLength} caracteres`, operator: `is longer than ${limits.maxLength} characters` }
  const folded = password.trim().toLowerCase()
  if (PLACEHOLDERS.has(folded)) return { mensaje: 'es una contraseña de ejemplo de la documentación; elija otra', operator: 'is a placeholder from the documentation (README.md, docs/, deploy/env.example)' }
  if (username !== undefined && folded === username.trim().toLowerCase()) return { mensaje: 'no puede ser igual al nombre de usuario', operator: 'equals the username' }
  return undefined
}
