/**
 * Runs the global chain's sealer and publishes signed checkpoints of its
 * head (records/integrity/checkpoints.ts) every CHECKPOINT_INTERVAL, into
 * CHECKPOINT_DIR and the log; decorates the app with them (`app.checkpoints`)
 * for /verificar, the on-demand route and the metrics. One instance seals
 * at a time; the others skip that round. The start refuses a CHECKPOINT_DIR
 * that holds another chain's checkpoints (docs/operator-guide.md "Tamper evidence").
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ConfigError } from '../core/errors.js'
import { chainIdentity, sharedStore } from '../records/integrity/chain-identity.js'
import { Checkpoints, type ForeignFile } from '../records/integrity/checkpoints.js'

declare module 'fastify' {
  interface FastifyInstance {
    checkpoints: Checkpoints
  }
}

/** How often an instance compacts CHECKPOINT_DIR (records/integrity/checkpoint-store.ts). */
const COMPACT_EVERY_MS = 3_600_000

async function checkpointsPlugin (app: FastifyInstance): Promise<void> {
  const dir = app.config.checkpointDir
  const cadena = await chainIdentity(app.orm.em.fork())
  let checkpoints: Checkpoints
  try {
    checkpoints = new Checkpoints({
      signer: app.signer,
      cadena,
      dir,
      onPublish: (cp, file) => {
        app.log.info({ punto_control: cp, ...(file !== undefined && { fichero: file }) },
          file === undefined ? 'global chain checkpoint published in this log and the database only (CHECKPOINT_DIR could not be written)' : 'global chain checkpoint published')
      },
      onProblem: (message, err) => { app.log.error({ ...(err !== undefined && { err }) }, message) },
    })
  } catch (err) {
    throw new ConfigError(`CHECKPOINT_DIR ${dir} cannot be created (${err instanceof Error ? err.message : String(err)}); point it at a writable directory`)
  }
  let foreign: ForeignFile[] = []
  try { foreign = checkpoints.foreignFiles() } catch { /* unreadable directory: readDirectory reports it */ }
  if (foreign.length > 0) throw sharedStore(dir, cadena, foreign)
  checkpoints.readDirectory()
  app.decorate('checkpoints', checkpoints)

  let running: Promise<unknown> | undefined
  let compacted = 0
  const tick = (): void => {
    if (running !== undefined) return
    checkpoints.readDirectory()
    running = checkpoints.run(app.orm.em.fork(), false)
      .then(() => {
        if (Date.now() - compacted < COMPACT_EVERY_MS) return
        compacted = Date.now()
        try {
          const removed = checkpoints.compact()
          if (removed > 0) app.log.info({ removed }, 'superseded checkpoint files removed from CHECKPOINT_DIR')
        } catch (err) { app.log.warn({ err }, `CHECKPOINT_DIR ${dir} could not be compacted this hour; trying again at the next`) }
      })
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
