/** Decorates the instance with the frozen configuration, registry and access table. */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../core/config.js'
import type { Registry } from '../core/registry/types.js'
import { compileAccess, type AccessTable } from '../core/access.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    registry: Registry
    access: AccessTable
  }
}

export interface ConfigPluginOptions {
  config: Config
  registry: Registry
}

async function configPlugin (app: FastifyInstance, opts: ConfigPluginOptions): Promise<void> {
  app.decorate('config', opts.config)
  app.decorate('registry', opts.registry)
  app.decorate('access', compileAccess(opts.registry))
}

export default fp(configPlugin, { name: 'policia-config', fastify: '5.x' })
