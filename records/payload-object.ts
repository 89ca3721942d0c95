/**
 * A hash payload (records/record-view.ts `hashPayload`) as an object V8
 * keeps in fast mode: made by a function generated once per module from
 * its members' names, as view-builder.ts makes the API record. Stored key
 * by key into `{}`, an object of more than 16 members turns into a
 * dictionary (V8's limit for keyed stores; a named store allows 128), and
 * every later step takes its slow path: canonical.ts's `Object.keys`,
 * `JSON.stringify`, changedFields' reads (docs/performance.md "A lone
 * create's wait, and a payload past sixteen members"). Here each member
 * is a named store. Keys are written as JSON string literals from the
 * registry; values are never part of the code.
 */

/** The payload of a row's member values, in the keys' order: undefined leaves a member out. */
export type PayloadObject = (values: readonly unknown[]) => Record<string, unknown>

export function payloadObject (keys: readonly string[]): PayloadObject {
  const stores = keys.map((k, i) => `if ((v = values[${i}]) !== undefined) p[${JSON.stringify(k)}] = v`)
  return new Function('values', `let v\nconst p = {}\n${stores.join('\n')}\nreturn p`) as PayloadObject
}
