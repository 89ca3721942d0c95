/**
 * Once per `npm test`: names the run (every database and Redis key a test
 * makes carries it) and, at the end, removes whatever the run left behind.
 */
import { randomBytes } from 'node:crypto'
import { dropRunDatabases, dropRunKeys } from './services.js'

export default function setup (): () => Promise<void> {
  const run = `r${Date.now().toString(36)}${randomBytes(2).toString('hex')}`
  process.env.TEST_RUN_ID = run
  return async () => {
    await dropRunDatabases(run)
    await dropRunKeys(run)
  }
}
