/**
 * Runs the global chain's sealer and publishes signed checkpoints of its
 * head (records/checkpoints.ts) every CHECKPOINT_INTERVAL, into
 * CHECKPOINT_DIR and the log; decorates the app with them (`app.checkpoints`)
 * for /verificar and the on-demand route. One instance seals at a time; the
 * others skip that round.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ConfigError } from '../core/errors.js'
import { Checkpoints } from '../records/checkpoints.js'

declare module 'fastify' {
  interface FastifyInstance {
    checkpoints: Checkpoints
  }
}

async function checkpointsPlugin (app: FastifyInstance): Promise<void> {
  const dir = app.config.checkpointDir
  let checkpoints: Checkpoints
  try {
    checkpoints = new Checkpoints({
      signer: app.signer,
      dir,
      onPublish: (cp, file) => { app.log.info({ punto_control: cp, ...(file !== undefined && { fichero: file }) }, 'global chain checkpoint published') },
      onProblem: (message, err) => { app.log.error({ ...(err !== undefined && { err }) }, message) },
    })
  } catch (err) {
    throw new ConfigError(`CHECKPOINT_DIR ${dir} cannot be created (${err instanceof Error ? err.message : String(err)}); point it at a writable directory`)
  }
  checkpoints.readDirectory()
  app.decorate('checkpoints', checkpoints)

  let running: Promise<unknown> | undefined
  const tick = (): void => {
    if (running !== undefined) return
    checkpoints.readDirectory()
    running = checkpoints.run(app.orm.em.fork(), false)
      .catch((err: unknown) => { app.log.warn({ err }, 'the global chain could not be sealed this round; retrying at the next one') })
      .finally(() => { running = undefined })
  }
  const timer = setInterval(tick, app.config.checkpointIntervalMs)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}

export default fp(checkpointsPlugin, { name: 'policia-checkpoints', fastify: '5.x', dependencies: ['policia-config', 'policia-orm', 'policia-system-keys'] })
