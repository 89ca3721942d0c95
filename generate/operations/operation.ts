/**
 * One operation of a module's route plugin (docs/architecture.md "Adding an
 * operation to every module"): where it answers, which action it needs, its
 * schemas, and a handler that makes one call to the caller's records
 * service (or, for a module's own operation, to a service of the records
 * layer) and wraps the answer. It decides no permission itself: the
 * records layer does, asked before validation when the operation names an
 * action (generate/routes.ts).
 */
import type { FastifyContextConfig, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import type { Action, ModuleDef, Registry } from '../../core/registry/types.js'
import type { RouteDocs } from '../../http/openapi-docs.js'
import type { ModuleSchemas } from '../schemas.js'

/** What every operation of one module shares, built once per module by generate/routes.ts. */
export interface OperationContext {
  readonly registry: Registry
  /** The service time zone (TZ), named where the document describes instants. */
  readonly timeZone: string
  readonly schemas: ModuleSchemas
  /** A reference to the module's record schema (`<module>Record`). */
  readonly recordRef: TSchema
  /** A read's record as documented: the whole record, with `expandir` the expanded one (`<module>Expandido`, modules with refs), or with `campos` a partial one (`<module>Parcial`). */
  readonly readRef: TSchema
  /** The OpenAPI tags of the module's operations. */
  readonly tags: string[]
  /** The operationId of one of the operations every module has (generate/operation-names.ts). */
  operationId (verb: string): string
}

/** The route's schema (validation and document) and what the document says beyond it (http/openapi-docs.ts). */
export interface OperationSchema {
  readonly schema: FastifySchema
  readonly openapi?: RouteDocs
}

export interface Operation {
  readonly method: HTTPMethods
  /** Below the module's path: `/`, `/:id`, `/:id/historial`. */
  readonly url: string
  /** The action asked of the records service before the body is parsed (docs/user-guide.md "Errors"); none: the handler's call asks. */
  readonly action?: Action
  /** More of the route's config (http/route-config.ts), e.g. a streamed body. */
  readonly config?: FastifyContextConfig
  schema (mod: ModuleDef, ctx: OperationContext): OperationSchema
  /** The answer's body; status and headers are set on `reply`. */
  handle (request: FastifyRequest, reply: FastifyReply, mod: ModuleDef): Promise<unknown>
}
