/**
 * `npm start`: loads configuration and modules.yaml, builds the app,
 * waiting with back-off for PostgreSQL and Redis when they are not
 * reachable yet (STARTUP_WAIT; the port is open meanwhile with the starting
 * answers of http/starting-server.ts: /health 200, the rest 503), then
 * serves it,
 * prints where it is and how to log in, and shuts down gracefully on
 * SIGTERM or SIGINT (in-flight requests finish, then connections close).
 */
import { parseArgs } from 'node:util'
import type { RequestListener } from 'node:http'
import { loadConfig } from '../core/config.js'
import { ConfigError } from '../core/errors.js'
import { loadRegistry } from '../core/registry/load.js'
import { buildApp } from '../app.js'
import { startingServer } from '../http/starting-server.js'
import { limitHeapGrowth } from './heap-growth.js'

const HELP = `npm start  (in the image: node dist/bin/server.js)

Starts the records service: reads the environment (docs/operator-guide.md "Configuration")
and MODULES_FILE, waits for PostgreSQL and Redis with back-off when they
are not reachable yet (for ever, or up to STARTUP_WAIT; meanwhile HOST:PORT
answers /health 200 and everything else 503), brings the database schema in line with modules.yaml, and
serves the API; Prometheus metrics on METRICS_PORT. SIGTERM or SIGINT stop
it gracefully.
Exit status: 0 after a graceful stop; 1 when the configuration,
modules.yaml or the database schema refuse the start (the message says
what to fix), or STARTUP_WAIT ran out.
`

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help === true) { process.stdout.write(HELP); return }
  const config = loadConfig()
  limitHeapGrowth(config.heapGrowthPercent)
  const registry = loadRegistry(config.modulesFile)
  const starting = startingServer(config.port, config.host, config.keepAliveTimeoutMs)
  const listen = (): void => {
    starting.listen().catch((err: unknown) => {
      process.stderr.write(`\nCould not open ${config.host}:${config.port}: ${err instanceof Error ? err.message : String(err)}\nStop whatever holds that port, or choose another with PORT (and HOST).\n\n`)
      process.exit(1)
    })
  }
  let closing = false
  let app: Awaited<ReturnType<typeof buildApp>> | undefined
  const shutdown = (signal: string): void => {
    if (closing) return
    closing = true
    const timer = setTimeout(() => { process.stderr.write('shutdown took over 10 s; exiting\n'); process.exit(1) }, 10_000)
    timer.unref()
    if (app === undefined) { process.stderr.write(`${signal} while starting: exiting\n`); process.exit(0) }
    app.log.info({ signal }, 'shutting down')
    const running = app
    starting.drain(9_000)
      .then(async () => { await running.close() })
      .then(() => process.exit(0), (err: unknown) => { running.log.error(err); process.exit(1) })
  }
  process.on('SIGTERM', () => { shutdown('SIGTERM') })
  process.on('SIGINT', () => { shutdown('SIGINT') })

  // Fastify takes its handler at construction; it serves only once built.
  let handler: RequestListener | undefined
  app = await buildApp({
    config,
    registry,
    waitForServices: true,
    // Waiting for PostgreSQL or Redis: open the port now (/health 200, the rest 503).
    onWaiting: listen,
    serverFactory: (h) => { handler = h as RequestListener; return starting.server },
  })
  starting.serve(handler!)
  await starting.listen()
  const { port } = starting.server.address() as { port: number }
  const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host
  const url = `http://${shown}:${port}`
  const lines = [
    '',
    `  Registros de Policía Local listening on ${url}`,
    `  Database: ${app.databaseKind === 'embedded' ? `embedded (PGlite) in ${config.dataDir}/pgdata, socket in ${String(app.orm.config.get('host'))}` : 'PostgreSQL'}; shared state: ${app.stores.kind === 'redis' ? 'Redis' : 'in process'}`,
    `  Chain checkpoints: ${config.checkpointDir} (public key: ${app.signer.publicKey})`,
    `  Console (web): ${url}/consola`,
    `  OpenAPI documentation: ${url}/docs`,
    `  Metrics (Prometheus): ${config.metricsPort === 0 ? 'off (METRICS_PORT=0)' : `http://${shown}:${config.metricsPort}/metrics`}`,
  ]
  if (app.firstLogin !== undefined) {
    lines.push(`  First superadmin created: username "${app.firstLogin.username}"`)
    if (app.firstLogin.generatedPassword !== undefined) {
      lines.push(`  Generated password (shown only this once): ${app.firstLogin.generatedPassword}`)
    }
  }
  lines.push(`  Log in: curl -s -X POST ${url}/auth/login -H 'Content-Type: application/json' -d '{"username":"…","password":"…"}'`, '')
  process.stdout.write(lines.join('\n') + '\n')
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`\n${err.message}\n\n`)
  } else {
    process.stderr.write(`\nThe service could not start: ${err instanceof Error ? err.message : String(err)}\n\n`)
  }
  process.exit(1)
})
