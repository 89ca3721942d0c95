/**
 * The delivering instance of `BENCH_DELIVERY=apart npm run bench:webhooks`
 * (test/bench/webhook-cost.bench.ts): the service on the bench's database
 * and Redis prefix (BENCH_REDIS_PREFIX), in a process of its own so its CPU
 * is counted apart from the instance that serves the creates. Says `ready`
 * over IPC; stops on any message.
 */
import { startBenchServer } from './bench-app.js'

const server = await startBenchServer({ redisPrefix: process.env.BENCH_REDIS_PREFIX! })
process.send!('ready')
process.once('message', () => { void server.stop().then(() => process.exit(0)) })
