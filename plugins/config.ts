/** Decorates the instance with the frozen configuration, registry and permission table. */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../core/config.js'
import type { Registry } from '../core/registry/types.js'
import { compilePermissions, type PermissionTable } from '../core/permissions.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    registry: Registry
    permissions: PermissionTable
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
}

export default fp(configPlugin, { name: 'policia-config', fastify: '5.x' })
