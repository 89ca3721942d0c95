/**
 * Issued tokens (by jti). The database keeps every session so a revoked
 * token stays revoked after Redis loses its keys (SPEC S8). Holds no secret:
 * a jti cannot be turned into a token.
 */
import { EntitySchema } from '@mikro-orm/core'

export interface SessionRow {
  jti: string
  usuario: string
  emitido: Date
  expira: Date
  revocado: Date | null
}

export const SessionEntity = new EntitySchema<SessionRow>({
  name: 'sys_sesion',
  tableName: 'sys_sesiones',
  properties: {
    jti: { type: 'string', length: 64, primary: true, fieldName: 'jti' },
    usuario: { type: 'string', length: 40, fieldName: 'usuario', index: true },
    emitido: { type: 'datetime', columnType: 'timestamptz', fieldName: 'emitido' },
    expira: { type: 'datetime', columnType: 'timestamptz', fieldName: 'expira', index: true },
    revocado: { type: 'datetime', columnType: 'timestamptz', fieldName: 'revocado', nullable: true },
  },
})
