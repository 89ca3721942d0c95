/**
 * The delivery state of each subscription and its attempts, in the
 * service's own tables (db/subscription-entities.ts; docs/decisions.md
 * "Webhook delivery state"): plain statements, no record writes, so a
 * delivery makes no event. Run by records/subscriptions/ (deliverer.ts,
 * subscriptions-policy.ts, subscription-admin.ts).
 *
 * The lease: an instance delivers a subscription while it holds
 * `arrendatario` with `arriendo_hasta` in the future (the database's
 * clock), and renews it well before; one that stops renewing (it died) is
 * replaced once it expires. Every move of the position is made only by
 * the holder of a live lease and only from the position it read, so a
 * replay or a resume from the API, or a new holder, is never overwritten.
 */
import { isoText } from '../core/time.js'
import { queryRows, runStatement, type Db } from './statement.js'
import type { DeliveryResult } from './subscription-entities.js'

export interface DeliveryState {
  readonly suscripcion: string
  readonly secreto: string
  readonly posicion: number
  readonly fallandoDesde: Date | null
  readonly intentos: number
  readonly proximoIntento: Date | null
  readonly pausada: boolean
}

interface StateRow { suscripcion: string, secreto: string, posicion: string, fallando_desde: Date | string | null, intentos: number, proximo_intento: Date | string | null, pausada: boolean }

const date = (v: Date | string | null): Date | null => v === null ? null : new Date(v)

/** A new subscription's state, from position `posicion` on. */
export async function insertState (db: Db, id: string, secreto: string, posicion: number): Promise<void> {
  await runStatement(db, `insert into sys_suscripciones_estado (suscripcion, secreto, posicion, intentos, pausada) values (?, ?, ?, 0, false)
    on conflict (suscripcion) do update set secreto = excluded.secreto`, [id, secreto, posicion])
}

export async function setSecret (db: Db, id: string, secreto: string): Promise<void> {
  await runStatement(db, 'update sys_suscripciones_estado set secreto = ? where suscripcion = ?', [secreto, id])
}

export async function readState (db: Db, id: string): Promise<DeliveryState | undefined> {
  const [r] = await queryRows<StateRow>(db, 'select suscripcion, secreto, posicion::text as posicion, fallando_desde, intentos, proximo_intento, pausada from sys_suscripciones_estado where suscripcion = ?', [id])
  if (r === undefined) return undefined
  return { suscripcion: r.suscripcion, secreto: r.secreto, posicion: Number(r.posicion), fallandoDesde: date(r.fallando_desde), intentos: r.intentos, proximoIntento: date(r.proximo_intento), pausada: r.pausada }
}

/**
 * Renews this instance's leases and takes the free or expired ones of
 * subscriptions that are live, active and not paused (`FOR UPDATE SKIP
 * LOCKED`: two instances never take the same one); the ids it now holds.
 */
export async function claim (db: Db, table: string, activa: string, me: string, leaseMs: number): Promise<string[]> {
  const rows = await queryRows<{ suscripcion: string }>(db, `update sys_suscripciones_estado e
        set arrendatario = ?, arriendo_hasta = now() + (? * interval '1 millisecond')
      where e.suscripcion in (
        select s.suscripcion from sys_suscripciones_estado s join "${table}" r on r."_id" = s.suscripcion
         where not s.pausada and r."_deleted" is null and r."${activa}" is not false
           and (s.arrendatario = ? or s.arriendo_hasta is null or s.arriendo_hasta < now())
         for update of s skip locked)
      returning e.suscripcion`, [me, leaseMs, me])
  return rows.map((r) => r.suscripcion)
}

/** Gives this instance's leases back (a clean stop: another instance takes over at once). */
export async function release (db: Db, me: string): Promise<void> {
  await runStatement(db, 'update sys_suscripciones_estado set arrendatario = null, arriendo_hasta = null where arrendatario = ?', [me])
}

const HELD = 'suscripcion = ? and arrendatario = ? and arriendo_hasta > now() and posicion = ?'

/** Moves the position from `from` to `to` and clears any failure; false when the lease or the position changed meanwhile. */
export async function advance (db: Db, id: string, me: string, from: number, to: number): Promise<boolean> {
  return await runStatement(db, `update sys_suscripciones_estado set posicion = ?, fallando_desde = null, intentos = 0, proximo_intento = null where ${HELD}`, [to, id, me, from]) > 0
}

/** Records a failed attempt at the event after `at`: the failure's start, its count and the next attempt. */
export async function failing (db: Db, id: string, me: string, at: number, since: Date, intentos: number, next: Date): Promise<boolean> {
  return await runStatement(db, `update sys_suscripciones_estado set fallando_desde = ?, intentos = ?, proximo_intento = ? where ${HELD}`, [since, intentos, next, id, me, at]) > 0
}

/** Pauses the subscription as failing (the retry window is over) and lets its lease go. */
export async function pause (db: Db, id: string, me: string, at: number): Promise<boolean> {
  return await runStatement(db, `update sys_suscripciones_estado set pausada = true, proximo_intento = null, arrendatario = null, arriendo_hasta = null where ${HELD}`, [id, me, at]) > 0
}

/** Resumes a paused subscription (`reanudar`): its failing event is tried again at once, with a new retry window. */
export async function resume (db: Db, id: string): Promise<boolean> {
  return await runStatement(db, 'update sys_suscripciones_estado set pausada = false, fallando_desde = null, intentos = 0, proximo_intento = null where suscripcion = ?', [id]) > 0
}

/** Delivers again from position `from` on (`reproducir`): also resumes a paused subscription. */
export async function replay (db: Db, id: string, from: number): Promise<boolean> {
  return await runStatement(db, 'update sys_suscripciones_estado set posicion = ?, pausada = false, fallando_desde = null, intentos = 0, proximo_intento = null where suscripcion = ?', [Math.max(0, from - 1), id]) > 0
}

export interface AttemptRow {
  readonly suscripcion: string
  readonly fecha: Date
  readonly posicion: number
  readonly estado?: number | undefined
  readonly latencia_ms: number
  readonly error?: string | undefined
  readonly resultado: DeliveryResult
}

/** Attempts as one JSON value: one statement text however many (as the chain's entries, db/global-chain-statements.ts). */
const RECORD_ATTEMPTS_SQL = `insert into sys_entregas (suscripcion, fecha, posicion, estado, latencia_ms, error, resultado)
  select suscripcion, fecha, posicion, estado, latencia_ms, error, resultado
    from json_to_recordset(?::json) as a(suscripcion text, fecha timestamptz, posicion bigint, estado integer, latencia_ms integer, error text, resultado text)`

/** Records attempts, in one statement. */
export async function recordAttempts (db: Db, rows: readonly AttemptRow[]): Promise<void> {
  if (rows.length === 0) return
  await runStatement(db, RECORD_ATTEMPTS_SQL, [JSON.stringify(rows.map((a) => ({
    suscripcion: a.suscripcion, fecha: isoText(a.fecha), posicion: a.posicion, estado: a.estado ?? null, latencia_ms: a.latencia_ms, error: a.error?.slice(0, 1000) ?? null, resultado: a.resultado,
  })))])
}

/** A page of a subscription's attempts, newest first. */
export async function listAttempts (db: Db, id: string, limit: number, offset: number): Promise<{ total: number, rows: AttemptRow[] }> {
  const [count] = await queryRows<{ n: string }>(db, 'select count(*)::text as n from sys_entregas where suscripcion = ?', [id])
  const rows = await queryRows<{ suscripcion: string, fecha: Date | string, posicion: string, estado: number | null, latencia_ms: number, error: string | null, resultado: DeliveryResult }>(db,
    `select suscripcion, fecha, posicion::text as posicion, estado, latencia_ms, error, resultado from sys_entregas where suscripcion = ? order by id desc limit ${Math.trunc(limit)} offset ${Math.trunc(offset)}`, [id])
  return {
    total: Number(count?.n ?? 0),
    rows: rows.map((r) => ({ suscripcion: r.suscripcion, fecha: new Date(r.fecha), posicion: Number(r.posicion), ...(r.estado !== null && { estado: r.estado }), latencia_ms: r.latencia_ms, ...(r.error !== null && { error: r.error }), resultado: r.resultado })),
  }
}
