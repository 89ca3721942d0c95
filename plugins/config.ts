/** Decorates the instance with the frozen configuration, registry, permission table and field cipher. */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../core/config.js'
import type { Registry } from '../core/registry/types.js'
import { compilePermissions, type PermissionTable } from '../core/permissions.js'
import { createFieldCipher, type FieldCipher } from '../core/crypto.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    registry: Registry
    permissions: PermissionTable
    cipher: FieldCipher
  }
}

export interface ConfigPluginOptions {
  config: Config
  registry: Registry
}

async function configPlugin (app: FastifyInstance, opts: ConfigPluginOptions): Promise<void> {
  app.decorate('config', opts.config)
  app.decorate('registry', opts.registry)
  app.decorate('permissions', compilePermissions(opts.registry))
  app.decorate('cipher', createFieldCipher(opts.config.encryptionKeys, opts.config.indexKey))
}

export default fp(configPlugin, { name: 'policia-config', fastify: '5.x' })
