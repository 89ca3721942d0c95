/**
 * The first superadmin (docs/operator-guide.md "Configuration"): when no user exists, ADMIN_USERNAME and
 * ADMIN_PASSWORD create one; in embedded mode without them, user `admin`
 * gets a random password that the start-up banner prints once.
 */
import fp from 'fastify-plugin'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import { AppError, ConfigError } from '../core/errors.js'
import { passwordProblem } from '../core/passwords.js'
import type { Caller } from '../core/access.js'
import { entityName } from '../db/module-entity.js'
import { countRows } from '../db/row-query.js'

export interface FirstLogin {
  readonly username: string
  /** Present only when the service generated it. */
  readonly generatedPassword?: string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Set when this start created the first superadmin. */
    firstLogin?: FirstLogin
  }
}

/** Caller recorded in `_created_by` of records the service makes itself, acting with the super role. */
function systemCaller (rol: string): Caller {
  return { id: 'SISTEMA', username: 'sistema', rol, personalId: null }
}

async function bootstrapAdmin (app: FastifyInstance): Promise<void> {
  const users = app.registry.usersModule
  const em = app.orm.em.fork()
  if (await countRows(em, entityName(users), { _deleted: null }) > 0) return
  const embedded = app.databaseKind === 'embedded'
  const username = app.config.adminUsername ?? (embedded ? 'admin' : undefined)
  let password = app.config.adminPassword
  let generated: string | undefined
  if (username === undefined || (password === undefined && !embedded)) {
    app.log.warn('no users exist: set ADMIN_USERNAME and ADMIN_PASSWORD to create the first superadmin')
    return
  }
  if (password === undefined) password = generated = randomBytes(12).toString('base64url')
  else {
    // The users policy would refuse it too; say here what to change (docs/user-guide.md "Accounts and sessions").
    const problem = passwordProblem(password, username, users.fieldMap.get('password')!)
    if (problem !== undefined) {
      throw new ConfigError(`ADMIN_PASSWORD ${problem.operator}; refusing to create the first superadmin "${username}" with it. ` +
        'Set ADMIN_PASSWORD to a secret of your own (for example: node -e "console.log(require(\'crypto\').randomBytes(18).toString(\'base64url\'))") and start again.')
    }
  }
  const superRole = users.fieldMap.get('rol')!.enum!.find((r) => app.access.isSuper(r))
  if (superRole === undefined) throw new Error('modules.yaml: no role in usuarios.rol holds "*.*"; cannot create the first administrator')
  try {
    await app.records.storage(users).create({ em }, systemCaller(superRole), { username, password, nombre: 'Administrador', rol: superRole })
  } catch (err) {
    // Another instance created it at the same moment.
    if (err instanceof UniqueConstraintViolationException || (err instanceof AppError && err.code === 'REGISTRO_DUPLICADO')) return
    if (err instanceof AppError) throw new Error(`ADMIN_USERNAME/ADMIN_PASSWORD rejected: ${JSON.stringify(err.detalles ?? err.message)}`)
    throw err
  }
  app.decorate('firstLogin', { username, ...(generated !== undefined && { generatedPassword: generated }) })
  app.log.info({ username }, 'first superadmin created')
}

export default fp(bootstrapAdmin, { name: 'policia-bootstrap-admin', fastify: '5.x', dependencies: ['policia-orm', 'policia-stores', 'policia-records'] })
