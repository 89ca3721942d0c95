/**
 * Prometheus metrics (docs/operator-guide.md "Metrics") on a listener of their own, METRICS_PORT
 * (default 9464; 0: none), never on the public port: the public port
 * answers /metrics like any unknown route. One onResponse hook feeds one
 * histogram (its `_count` is the request count) labelled by method, route
 * pattern (never the raw URL: ids would make a series each) and status;
 * 429s are counted apart. Checkpoint write failures, the database pool,
 * Redis, the open live streams and the process (prom-client's default collectors) are read at
 * scrape time, off the hot path. With METRICS_PORT=0 nothing is registered: no hook, no cost.
 */
import fp from 'fastify-plugin'
import { createServer, type Server } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { ConfigError } from '../core/errors.js'
import { poolCounts } from '../db/driver-internals.js'

/** Few buckets: one observation per request must stay cheap (docs/operator-guide.md "Metrics"). */
const BUCKETS = [0.005, 0.025, 0.1, 0.5, 2.5]
/** Route label of a request no route matched (404 of an unknown address). */
const NO_ROUTE = '(ninguna)'

declare module 'fastify' {
  interface FastifyInstance {
    /** The metrics listener, when METRICS_PORT is not 0. */
    metricsServer?: Server
    /** Counts a login lock-out that engaged (`direccion`, `total`, `dispositivo`, `sesion`); nothing with METRICS_PORT=0. */
    countLoginLockout: (tipo: string) => void
    /** Counts events produced (entries sealed into the chain, records/events/feed.ts); nothing with METRICS_PORT=0. */
    countEvents: (n: number) => void
    /** Counts a webhook delivery attempt by its result (records/subscriptions/deliverer.ts); nothing with METRICS_PORT=0. */
    countDelivery: (resultado: string) => void
    /** Counts an evidence file found altered on download (records/files/sealed-read.ts), by module; nothing with METRICS_PORT=0. */
    countAlteredFile: (modulo: string) => void
    /** Counts a 503 by the dependency that was unavailable (plugins/error-handler.ts); nothing with METRICS_PORT=0. */
    countUnavailable: (dependencia: string) => void
  }
}

interface Metrics {
  registry: Registry
  observe: (method: string, route: string, status: number, seconds: number) => void
  lockout: (tipo: string) => void
  events: (n: number) => void
  delivery: (resultado: string) => void
  altered: (modulo: string) => void
  unavailable: (dependencia: string) => void
}

function metricsRegistry (app: FastifyInstance): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Requests by method, route pattern and status, and how long they took (seconds); _count is the request count',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: BUCKETS,
    registers: [registry],
  })
  const refusals = new Counter({
    name: 'http_rate_limit_refusals_total',
    help: 'Requests refused with 429 (rate limits and login lock-outs), by route pattern',
    labelNames: ['route'] as const,
    registers: [registry],
  })
  const lockouts = new Counter({
    name: 'login_lockouts_total',
    help: 'Login lock-outs that engaged, by kind: direccion (one username from one address), total (one username from any addresses), dispositivo (one username on one device), sesion (current-password checks of one session)',
    labelNames: ['tipo'] as const,
    registers: [registry],
  })
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections: used, free, and requests waiting for one (pending)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect () {
      const pool = app.hasDecorator('orm') ? poolCounts(app.orm.em.getConnection().getKnex()) : undefined
      if (pool === undefined) return
      this.set({ state: 'used' }, pool.used)
      this.set({ state: 'free' }, pool.free)
      this.set({ state: 'pending' }, pool.pending)
    },
  })
  new Counter({
    name: 'checkpoint_failures_total',
    help: 'Checkpoints of the global chain this instance signed but could not write to CHECKPOINT_DIR (full or not writable)',
    registers: [registry],
    collect () {
      this.reset()
      if (app.hasDecorator('checkpoints')) this.inc(app.checkpoints.failures)
    },
  })
  new Gauge({
    name: 'event_streams_open',
    help: 'Live event streams (GET /eventos) open on this instance',
    registers: [registry],
    collect () { this.set(app.hasDecorator('eventStreams') ? app.eventStreams.size : 0) },
  })
  if (app.config.redis !== undefined) {
    new Gauge({
      name: 'redis_up',
      help: 'Whether the Redis connection is ready (1) or not (0)',
      registers: [registry],
      collect () { this.set(app.hasDecorator('redis') && app.redis.status === 'ready' ? 1 : 0) },
    })
    new Counter({
      name: 'redis_reconnects_total',
      help: 'Times the Redis connection became ready again after it broke (an outage, a restart, a failover)',
      registers: [registry],
      collect () { this.reset(); if (app.hasDecorator('redisLink')) this.inc(app.redisLink.reconnects) },
    })
    new Counter({
      name: 'redis_primary_changes_total',
      help: 'Reconnections that landed on another Redis server than before: a Sentinel promotion (REDIS_SENTINELS)',
      registers: [registry],
      collect () { this.reset(); if (app.hasDecorator('redisLink')) this.inc(app.redisLink.primaryChanges) },
    })
  }
  const events = new Counter({ name: 'events_produced_total', help: 'Events produced: writes sealed into the global chain by this instance (docs/user-guide.md "Webhooks (suscripciones)")', registers: [registry] })
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: entregado (2xx), reintento (to be retried), descartado (a 4xx: given up), pausada (the retry window ended)',
    labelNames: ['resultado'] as const,
    registers: [registry],
  })
  const altered = new Counter({
    name: 'evidence_files_altered_total',
    help: 'Evidence file downloads refused or cut short because the stored bytes do not match the SHA-256 the record seals (tampering), by module',
    labelNames: ['modulo'] as const,
    registers: [registry],
  })
  const unavailable = new Counter({
    name: 'dependency_unavailable_total',
    help: 'Requests answered 503 because a dependency was unavailable, by dependency: postgresql, redis, archivos (the evidence file store), importacion (TMPDIR); a failover shows as a burst',
    labelNames: ['dependencia'] as const,
    registers: [registry],
  })
  const lag = (name: string, help: string, key: 'posiciones' | 'segundos'): void => {
    new Gauge({
      name,
      help,
      labelNames: ['suscripcion'] as const,
      registers: [registry],
      collect () {
        this.reset()
        if (app.hasDecorator('webhooks')) for (const l of app.webhooks.lags()) this.set({ suscripcion: l.suscripcion }, l[key])
      },
    })
  }
  lag('webhook_lag_positions', 'Feed positions a subscription delivered by this instance is behind the head', 'posiciones')
  lag('webhook_lag_seconds', 'Age of the oldest event a subscription delivered by this instance has yet to deliver (seconds)', 'segundos')
  // One labelled child per method, route and status, made once: the hot
  // path then only adds to a bucket.
  const children = new Map<string, Histogram.Internal<'method' | 'route' | 'status_code'>>()
  const observe = (method: string, route: string, status: number, seconds: number): void => {
    const key = `${method} ${route} ${status}`
    let child = children.get(key)
    if (child === undefined) {
      child = duration.labels({ method, route, status_code: String(status) })
      children.set(key, child)
    }
    child.observe(seconds)
    if (status === 429) refusals.inc({ route })
  }
  return { registry, observe, lockout: (tipo) => { lockouts.inc({ tipo }) }, events: (n) => { events.inc(n) }, delivery: (resultado) => { deliveries.inc({ resultado }) }, altered: (modulo) => { altered.inc({ modulo }) }, unavailable: (dependencia) => { unavailable.inc({ dependencia }) } }
}

/** GET /metrics on its own listener; anything else there is 404. */
async function listen (registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the metrics are at GET /metrics\n')
      return
    }
    registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': registry.contentType }).end(text)
    }, () => { res.writeHead(500).end() })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(new ConfigError(`METRICS_PORT ${port} on ${host} cannot be used (${err.code ?? err.message}); set METRICS_PORT to a free port, or to 0 to turn the metrics listener off`))
    })
    server.listen(port, host, () => { resolve() })
  })
  return server
}

async function metricsPlugin (app: FastifyInstance): Promise<void> {
  const port = app.config.metricsPort
  if (port === 0) {
    app.decorate('countLoginLockout', () => undefined)
    app.decorate('countEvents', () => undefined)
    app.decorate('countDelivery', () => undefined)
    app.decorate('countAlteredFile', () => undefined)
    app.decorate('countUnavailable', () => undefined)
    return
  }
  const { registry, observe, lockout, events, delivery, altered, unavailable } = metricsRegistry(app)
  app.decorate('countLoginLockout', lockout)
  app.decorate('countEvents', events)
  app.decorate('countDelivery', delivery)
  app.decorate('countAlteredFile', altered)
  app.decorate('countUnavailable', unavailable)
  app.addHook('onResponse', async (request, reply) => {
    observe(request.method, request.routeOptions.url ?? NO_ROUTE, reply.statusCode, reply.elapsedTime / 1000)
  })
  const server = await listen(registry, port, app.config.host)
  server.unref()
  app.decorate('metricsServer', server)
  app.addHook('onClose', async () => {
    server.closeAllConnections()
    await new Promise((resolve) => { server.close(resolve) })
  })
}

export default fp(metricsPlugin, { name: 'policia-metrics', fastify: '5.x', dependencies: ['policia-config'] })
