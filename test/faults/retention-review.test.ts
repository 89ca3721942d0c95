/**
 * The daily retention review on three instances (docs/operator-guide.md
 * "Retention review"): each asks every REVIEW_CHECK_INTERVAL (1 s here)
 * whether today's review ran, and the review runs once however many ask.
 * While another session holds the review's advisory lock, none runs; once
 * it is free, exactly one does, and the others find the day's run done.
 * Each round starts a "new day" by removing the day's run.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from './helpers/processes.js'
import { call, login, startStack, type Stack } from './helpers/stack.js'

/** records/data-protection/retention-review.ts */
const REVIEW_LOCK = 720_094
const ROUNDS = 4

describe('the retention review on three instances', () => {
  let stack: Stack

  beforeAll(async () => {
    stack = await startStack({ instances: 3, env: { REVIEW_CHECK_INTERVAL: '1s', LOG_LEVEL: 'info' } })
  })
  afterAll(async () => { await stack?.close() })

  /** The runs every instance logged, as `instance:day`. */
  const runsLogged = (): string[] => stack.instances.flatMap((i) =>
    readFileSync(join(stack.dir, `${i.name}.log`), 'utf8').split('\n')
      .filter((line) => line.includes('"retention review ran'))
      .map((line) => `${i.name}:${(JSON.parse(line) as { dia: string }).dia}`))

  it('runs once a day across the instances, none while the lock is held, and lists the records due', async () => {
    const token = await login(stack.url)
    const due: string[] = []
    for (let n = 0; n < 3; n++) {
      const made = await call(stack.url, 'POST', '/denuncias', { token, body: { denunciante_nombre: 'Íñigo Muñoz', denunciante_dni: '12345678Z', tipo: 'hurto', fecha_hechos: '2019-05-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: `Cartera ${n}` } })
      expect(made.status, JSON.stringify(made.body)).toBe(201)
      const id = (made.body as { data: { _id: string } }).data._id
      expect((await call(stack.url, 'PUT', `/denuncias/${id}`, { token, body: { estado: 'archivada' } })).status).toBe(200)
      due.push(id)
    }
    // The first run of the day came with the first check after start.
    await waitFor('the first run of the day', async () => runsLogged().length >= 1, 30_000, 200)

    const holder = new pg.Client({ connectionString: stack.pg!.url('policia') })
    await holder.connect()
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const before = runsLogged().length
        await holder.query(`select pg_advisory_lock(${REVIEW_LOCK})`)
        await stack.query('delete from sys_revision_ejecuciones')
        // Three checks of every instance while the lock is held: no run.
        await new Promise((resolve) => setTimeout(resolve, 3_500))
        expect(runsLogged().length, `a run while the lock was held (round ${round})`).toBe(before)
        expect(await stack.query('select 1 from sys_revision_ejecuciones')).toEqual([])
        await holder.query(`select pg_advisory_unlock(${REVIEW_LOCK})`)
        await waitFor(`the run of round ${round}`, async () => runsLogged().length > before, 15_000, 100)
        // Three more checks of every instance: still that one run.
        await new Promise((resolve) => setTimeout(resolve, 3_500))
        expect(runsLogged().length, `runs in round ${round}: ${runsLogged().slice(before).join(', ')}`).toBe(before + 1)
        expect(await stack.query('select count(*)::int as n from sys_revision_ejecuciones')).toEqual([{ n: 1 }])
      }
    } finally {
      await holder.end()
    }
    const listed = await stack.query<{ registro: string }>("select registro from sys_revision where modulo = 'denuncias' order by registro")
    expect(listed.map((r) => r.registro)).toEqual(due)
    const runs = runsLogged()
    console.log(`[faults] retention review: ${runs.length} runs in ${ROUNDS + 1} days, by ${[...new Set(runs.map((r) => r.split(':')[0]))].join(', ')}`)
    expect(runs.length).toBe(ROUNDS + 1)
  })
})
