/**
 * Runs the daily retention review (records/data-protection/retention-review.ts;
 * docs/operator-guide.md "Retention review"): every instance asks each
 * REVIEW_CHECK_INTERVAL (the first time a minute after start, or sooner
 * when the interval is shorter) whether today's review has run, and runs
 * it if not. The advisory lock and the day's record make it one run a day
 * across instances. Nothing runs when no module declares `conservacion`.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { hostname } from 'node:os'
import { runReview } from '../records/data-protection/retention-review.js'

const FIRST_CHECK_MS = 60_000

async function retentionReviewPlugin (app: FastifyInstance): Promise<void> {
  const modules = app.registry.modules
  if (!modules.some((m) => m.retention !== undefined)) return
  const instance = `${hostname()}:${process.pid}`
  let running: Promise<unknown> | undefined
  let timer: NodeJS.Timeout | undefined
  const tick = (): void => {
    if (running !== undefined) return
    running = runReview(app.orm.em.fork(), modules, app.config.timeZone, instance, { force: false })
      .then((run) => { if (run.ran) app.log.info({ dia: run.dia, total: run.total, instancia: instance }, 'retention review ran: records due for the data-protection officer listed') })
      .catch((err: unknown) => { app.log.warn({ err }, 'the retention review could not run; trying again at the next check (REVIEW_CHECK_INTERVAL)') })
      .finally(() => { running = undefined })
  }
  app.addHook('onReady', async () => {
    const every = app.config.reviewCheckMs
    timer = setTimeout(() => {
      tick()
      timer = setInterval(tick, every)
      timer.unref()
    }, Math.min(every, FIRST_CHECK_MS))
    timer.unref()
  })
  app.addHook('onClose', async () => {
    clearTimeout(timer)
    clearInterval(timer)
    await running
  })
}

export default fp(retentionReviewPlugin, { name: 'policia-retention-review', fastify: '5.x', dependencies: ['policia-config', 'policia-orm'] })
