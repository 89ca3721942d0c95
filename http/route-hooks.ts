/**
 * Adds a hook to one route from an `onRoute` hook, after the hooks the
 * route already has. A hook that only some routes need (a body check, a
 * module's permission check) is attached to those routes when they are
 * added, instead of running for every request and asking
 * `request.routeOptions` (a new object on each read) whether it applies.
 * Fastify runs a route's own hooks after the app's, so the caller is
 * known by then.
 */
import type { RouteOptions } from 'fastify'

type HookName = 'onRequest' | 'preValidation'

export function appendRouteHook<K extends HookName> (route: RouteOptions, name: K, hook: NonNullable<RouteOptions[K]> extends infer H ? (H extends Array<infer F> ? F : H) : never): void {
  const current = route[name] as unknown
  const list = current === undefined ? [] : Array.isArray(current) ? current : [current]
  ;(route as unknown as Record<K, unknown[]>)[name] = [...list, hook]
}
