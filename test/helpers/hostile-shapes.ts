/**
 * 1 MiB request bodies of the worst shapes found for this service
 * (docs/operator-guide.md "Hostile input"), shared by the test that checks their answers
 * (test/integration/input-limits.test.ts) and the benchmark that measures
 * their cost (test/bench/hostile-body.bench.ts). Each is between 0.5 and
 * 1 MiB, and wrong for both POST and PUT of `denuncias`; several sit just
 * under a limit so that they reach the most expensive step before failing.
 */

export interface HostileShape {
  name: string
  body: () => string | Buffer
}

const key = (i: number, width: number): string => `k${i.toString(36)}`.padEnd(width, 'x')

export const HOSTILE_SHAPES: HostileShape[] = [
  { name: '200,000 nulls in an array field', body: () => JSON.stringify({ adjuntos: Array(200_000).fill(null) }) },
  { name: '200,000 nulls as the whole body', body: () => JSON.stringify(Array(200_000).fill(null)) },
  { name: '100,000 unknown keys', body: () => JSON.stringify(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [i.toString(36), 0]))) },
  { name: '100,000 system (_) keys', body: () => JSON.stringify(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`_${i.toString(36)}`, 0]))) },
  { name: '19,999 long unknown keys (just under the value limit)', body: () => JSON.stringify(Object.fromEntries(Array.from({ length: 19_999 }, (_, i) => [key(i, 44), 0]))) },
  { name: '19,999 long system keys, required fields missing', body: () => JSON.stringify(Object.fromEntries(Array.from({ length: 19_999 }, (_, i) => [`_${key(i, 44)}`, 0]))) },
  { name: '520,000 nested arrays', body: () => `${'['.repeat(520_000)}${']'.repeat(520_000)}` },
  { name: '170,000 nested objects', body: () => `${'{"a":'.repeat(170_000)}1${'}'.repeat(170_000)}` },
  { name: 'a 500,000-character string in a text field', body: () => JSON.stringify({ descripcion: 'é'.repeat(500_000) }) },
  { name: '170,000 escaped control characters', body: () => `{"descripcion":"${'\\u0000'.repeat(170_000)}"}` },
  {
    name: '200 array items of 50 keys, a control character last',
    body: () => JSON.stringify({ adjuntos: Array.from({ length: 200 }, (_, i) => Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`c${k}`, i === 199 && k === 49 ? 'fin\u0007' : 'x'.repeat(90)]))) }),
  },
  {
    name: '19,990 strings nested in an array item, a control character last',
    body: () => JSON.stringify({ adjuntos: [{ a: Array(19_990).fill('x'.repeat(48)) }, 'fin\u0007'] }),
  },
  { name: '3,000 numbers of 309 digits, then 1e400', body: () => `{"adjuntos":[${`1${'0'.repeat(308)},`.repeat(3_000)}1e400]}` },
  { name: '1 MiB of valid JSON text, then invalid UTF-8', body: () => Buffer.concat([Buffer.from(`{"descripcion":"${'x'.repeat(1_000_000)}`), Buffer.from([0xff]), Buffer.from('"}')]) },
  { name: '1 MiB of valid JSON text, then a syntax error', body: () => `{"descripcion":"${'x'.repeat(1_000_000)}",}` },
]
