/**
 * The one way a Redis store registers its Lua scripts (docs/architecture.md
 * "Stores"): each script becomes a command of the client with ioredis's
 * `defineCommand` (EVALSHA, and EVAL once when Redis does not hold the
 * script yet), and comes back as a typed function that runs it.
 *
 * A store defines its scripts when it is built, and the factory
 * (stores/factory.ts) builds each store once per client, so each command is
 * defined once per client. Building a second store on the same client (a
 * test may) defines the same scripts again, which ioredis takes as a plain
 * replacement; the functions returned earlier keep working.
 */
import type { Redis } from 'ioredis'

type Arg = string | number

/** A script's text and how many of its arguments are keys; without `numberOfKeys`, the first argument says. */
export interface LuaScript<A extends readonly Arg[], R> {
  readonly lua: string
  readonly numberOfKeys?: number
  /** Types only (never set): what the command takes and answers. */
  readonly signature?: (...args: A) => R
}

/** A script with its arguments (after the keys' count, when it has none fixed) and reply typed. */
export function luaScript<A extends readonly Arg[], R> (lua: string, numberOfKeys?: number): LuaScript<A, R> {
  return numberOfKeys === undefined ? { lua } : { lua, numberOfKeys }
}

/** The functions that run a table of scripts, by the same names. */
export type ScriptCommands<T> = {
  readonly [K in keyof T]: T[K] extends LuaScript<infer A, infer R> ? (...args: A) => Promise<R> : never
}

/**
 * Defines every script of `scripts` as the command of its name on `redis`
 * and returns the functions that run them. Names are the commands' names on
 * the client: one prefix (`policia`) keeps them apart from Redis's own.
 */
export function defineScripts<T extends Record<string, LuaScript<never, unknown>>> (redis: Redis, scripts: T): ScriptCommands<T> {
  const commands: Record<string, (...args: Arg[]) => Promise<unknown>> = {}
  for (const [name, script] of Object.entries(scripts)) {
    redis.defineCommand(name, script.numberOfKeys === undefined ? { lua: script.lua } : { lua: script.lua, numberOfKeys: script.numberOfKeys })
    // defineCommand adds the command as a method of that name (ioredis's documented way to call it).
    commands[name] = (redis as unknown as Record<string, (...args: Arg[]) => Promise<unknown>>)[name]!.bind(redis)
  }
  return commands as ScriptCommands<T>
}
