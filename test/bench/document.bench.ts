/**
 * `npm run bench:documento`: the CPU of printing a three-page atestado
 * (test/bench/document-cost.ts); `npm run bench` prints the same line
 * after its cases. Embedded by default, PostgreSQL and Redis when
 * DATABASE_URL / REDIS_URL are set.
 */
import { BENCH_ADMIN, startBenchServer } from './bench-app.js'
import { documentCost, documentLine } from './document-cost.js'

const server = await startBenchServer()
try {
  const token = (await server.json('POST', '/auth/login', BENCH_ADMIN)).data.token as string
  process.stdout.write(`\n${server.app.databaseKind} database\n` + documentLine(await documentCost(server, token)))
} finally {
  await server.stop()
}
