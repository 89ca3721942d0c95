/**
 * The retention review and blocking (docs/user-guide.md "Personal data"),
 * through HTTP and the database: the review lists the records whose
 * `conservacion` ran out and no others; a prolongation takes a record off
 * until its date; a blocked record does not exist for anyone but the
 * data-protection officer and superadmins (GET, list, summary, export,
 * history, print, edit, events), whose every read is logged; every
 * decision is kept with its author and reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, ok, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { expectError } from '../helpers/errors.js'
import { listenApp } from '../helpers/free-port.js'
import { openStream } from '../helpers/sse.js'

let t: TestApp
let dpo: Api, jefe: Api, oficial: Api
let oficialId: string
const query = (text: string, params: unknown[] = []): Promise<any[]> => t.h.db.query(text, params)

const denuncia = (fecha: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ denunciante_nombre: 'Íñigo Muñoz', denunciante_dni: '12345678Z', tipo: 'hurto', fecha_hechos: `${fecha} 10:30:00`, lugar_hechos: 'Plaza Mayor', descripcion: 'Cartera', ...extra })

async function created (api: Api, fecha: string, archived: boolean): Promise<string> {
  const id = ok(await api.post('/denuncias', denuncia(fecha)), 201)._id as string
  if (archived) ok(await api.put(`/denuncias/${id}`, { estado: 'archivada' }))
  return id
}

const due = async (): Promise<any> => ok(await dpo.get('/proteccion-datos/revision?modulo=denuncias&limit=1000'))
const dueIds = async (): Promise<string[]> => (await due()).records.map((r: any) => r.id)

beforeAll(async () => {
  t = await startTestApp()
  dpo = client(t.app, (await newUser(t.app, t.token, 'delegado_proteccion_datos')).token)
  jefe = client(t.app, (await newUser(t.app, t.token, 'jefe')).token)
  const o = await newUser(t.app, t.token, 'oficial')
  oficial = client(t.app, o.token)
  oficialId = o.id
})
afterAll(async () => { await t?.h.close() })

describe('the retention review', () => {
  let old: string, pending: string, recent: string

  beforeAll(async () => {
    old = await created(t.admin, '2019-05-01', true)
    pending = await created(t.admin, '2019-05-01', false)
    recent = await created(t.admin, '2025-05-01', true)
  })

  it('lists a closed denuncia five years after its facts, not one still open nor a recent one; only the officer reads it', async () => {
    const run = ok(await dpo.post('/proteccion-datos/revision'))
    expect(run.total).toBeGreaterThanOrEqual(1)
    const page = await due()
    const row = page.records.find((r: any) => r.id === old)
    expect(row).toEqual({ modulo: 'denuncias', id: old, desde: '2019-05-01', vence: '2024-05-01', estado: 'archivada', eliminado: false, bloqueado: null })
    expect(page.records.map((r: any) => r.id)).not.toContain(pending)
    expect(page.records.map((r: any) => r.id)).not.toContain(recent)
    expect(page.ultima_revision).toMatchObject({ total: run.total, dia: run.dia })
    const [stored] = await query('select count(*)::int as n from sys_revision_ejecuciones where dia = $1::date', [run.dia])
    expect(stored.n).toBe(1)

    expectError(await t.admin.get('/proteccion-datos/revision'), 'SIN_PERMISOS')
    expectError(await jefe.post('/proteccion-datos/revision'), 'SIN_PERMISOS')
    expectError(await dpo.get('/proteccion-datos/revision?modulo=vehiculos'), 'DATOS_INVALIDOS')
    expectError(await dpo.get('/proteccion-datos/revision?modul=denuncias'), 'DATOS_INVALIDOS')
  })

  it('a deleted record is still due (it holds the data), and an erased one is not', async () => {
    const deleted = await created(t.admin, '2018-01-01', true)
    ok(await t.admin.del(`/denuncias/${deleted}`))
    const erased = await created(t.admin, '2018-01-01', true)
    ok(await dpo.post(`/proteccion-datos/denuncias/${erased}/suprimir`, { motivo: 'Plazo cumplido' }))
    ok(await dpo.post('/proteccion-datos/revision'))
    const page = await due()
    expect(page.records.find((r: any) => r.id === deleted)).toMatchObject({ eliminado: true })
    expect(page.records.map((r: any) => r.id)).not.toContain(erased)
    const decisions = ok(await dpo.get(`/proteccion-datos/decisiones?modulo=denuncias&id=${erased}`))
    expect(decisions.records.map((d: any) => [d.accion, d.motivo])).toEqual([['suprimir', 'Plazo cumplido']])
  })

  it('a prolongation takes the record off until its date, kept with its reason; a date not after today is a 400', async () => {
    expectError(await dpo.post(`/proteccion-datos/denuncias/${old}/prolongar`, { motivo: 'Causa abierta', hasta: '2020-01-01' }), 'DATOS_INVALIDOS')
    expectError(await dpo.post(`/proteccion-datos/denuncias/${old}/prolongar`, { motivo: '  ', hasta: '2099-01-01' }), 'DATOS_INVALIDOS')
    expectError(await dpo.post(`/proteccion-datos/denuncias/${old}/prolongar`, { motivo: 'x', hasta: '2099-02-30' }), 'DATOS_INVALIDOS')
    expectError(await dpo.post('/proteccion-datos/denuncias/DEN-2019-99999/prolongar', { motivo: 'x', hasta: '2099-01-01' }), 'REGISTRO_NO_ENCONTRADO')
    expectError(await dpo.post('/proteccion-datos/atestados/ATE-2019-00001/prolongar', { motivo: 'x', hasta: '2099-01-01' }), 'MODULO_SIN_CONSERVACION')
    expectError(await t.admin.post(`/proteccion-datos/denuncias/${old}/prolongar`, { motivo: 'x', hasta: '2099-01-01' }), 'SIN_PERMISOS')
    const decision = ok(await dpo.post(`/proteccion-datos/denuncias/${old}/prolongar`, { motivo: 'Causa penal abierta', hasta: '2099-01-01' }))
    expect(decision).toMatchObject({ modulo: 'denuncias', id: old, accion: 'prolongar', motivo: 'Causa penal abierta', hasta: '2099-01-01' })
    expect(await dueIds()).not.toContain(old)
    ok(await dpo.post('/proteccion-datos/revision'))
    expect(await dueIds()).not.toContain(old)
    const log = ok(await t.admin.get(`/proteccion-datos/decisiones?id=${old}`))
    expect(log.records.map((d: any) => [d.accion, d.hasta])).toEqual([['prolongar', '2099-01-01']])
    expectError(await jefe.get('/proteccion-datos/decisiones'), 'SIN_PERMISOS')
    expectError(await dpo.get('/proteccion-datos/decisiones?accion=borrar'), 'DATOS_INVALIDOS')
  })
})

describe('a blocked record', () => {
  let id: string, other: string

  beforeAll(async () => {
    id = ok(await oficial.post('/denuncias', denuncia('2019-02-02', { agente_asignado: null, descripcion: 'Bloqueable' })), 201)._id
    other = ok(await oficial.post('/denuncias', denuncia('2019-02-02', { descripcion: 'Bloqueable' })), 201)._id
    ok(await oficial.put(`/denuncias/${id}`, { estado: 'archivada' }))
  })

  it('is out of sight for everyone but the officer and superadmins, everywhere, until unblocked', async () => {
    const before = ok(await jefe.get('/denuncias?fecha_hechos=2019-02-02%2010:30:00&limit=100'))
    const blocked = ok(await dpo.post(`/proteccion-datos/denuncias/${id}/bloquear`, { motivo: 'Conservación vencida; pendiente de supresión' }))
    expect(blocked).toMatchObject({ accion: 'bloquear', id, modulo: 'denuncias', bloqueado: expect.any(String) })
    expectError(await dpo.post(`/proteccion-datos/denuncias/${id}/bloquear`, { motivo: 'otra vez' }), 'REGISTRO_YA_BLOQUEADO')
    expectError(await dpo.post('/proteccion-datos/vehiculos/VEH-2026-00001/bloquear', { motivo: 'x' }), 'MODULO_SIN_DATOS_PERSONALES')
    expectError(await jefe.post(`/proteccion-datos/denuncias/${id}/bloquear`, { motivo: 'x' }), 'SIN_PERMISOS')
    const [row] = await query('select "_bloqueado" is not null as b, "_version" as v from denuncias where "_id" = $1', [id])
    expect(row).toEqual({ b: true, v: 2 })

    for (const api of [jefe, oficial]) {
      expectError(await api.get(`/denuncias/${id}`), 'REGISTRO_NO_ENCONTRADO')
      expectError(await api.get(`/denuncias/${id}?campos=tipo`), 'REGISTRO_NO_ENCONTRADO')
      expectError(await api.get(`/denuncias/${id}/historial`), 'REGISTRO_NO_ENCONTRADO')
      expectError(await api.get(`/denuncias/${id}/verificar`), 'REGISTRO_NO_ENCONTRADO')
      expectError(await api.get(`/denuncias/${id}/documento`), 'REGISTRO_NO_ENCONTRADO')
      expectError(await api.put(`/denuncias/${id}`, { prioridad: 'alta' }), 'REGISTRO_NO_ENCONTRADO')
    }
    const list = ok(await jefe.get('/denuncias?fecha_hechos=2019-02-02%2010:30:00&limit=100'))
    expect(list.total).toBe(before.total - 1)
    expect(list.records.map((r: any) => r._id)).not.toContain(id)
    expect(list.records.map((r: any) => r._id)).toContain(other)
    const summary = ok(await jefe.get('/denuncias/resumen?fecha_hechos=2019-02-02%2010:30:00&agrupar=estado'))
    expect(summary.total).toBe(before.total - 1)
    const exported = await jefe.get('/denuncias/exportar?formato=ndjson&fecha_hechos=2019-02-02%2010:30:00')
    expect(exported.status).toBe(200)
    expect(JSON.stringify(exported.body)).not.toContain(id)
    expect(JSON.stringify(exported.body)).toContain(other)

    // The officer and a superadmin read it, see since when, and each read is logged.
    for (const api of [dpo, t.admin]) {
      expect(ok(await api.get(`/denuncias/${id}`))).toMatchObject({ _id: id, _bloqueado: blocked.bloqueado, denunciante_dni: '12345678Z' })
    }
    ok(await t.admin.get(`/denuncias/${id}/historial`))
    expect(ok(await t.admin.get('/denuncias?fecha_hechos=2019-02-02%2010:30:00&limit=100')).records.map((r: any) => r._id)).toContain(id)
    const reads = ok(await t.admin.get(`/auditoria/lecturas?registro=${id}&tipo=bloqueado`))
    expect(reads.total).toBe(4)
    expect(reads.records.map((r: any) => r.ruta).sort()).toEqual(['GET /denuncias', 'GET /denuncias/:id', 'GET /denuncias/:id', 'GET /denuncias/:id/historial'])

    ok(await dpo.post('/proteccion-datos/revision'))
    expect((await due()).records.find((r: any) => r.id === id)).toMatchObject({ bloqueado: blocked.bloqueado })

    const unblocked = ok(await dpo.post(`/proteccion-datos/denuncias/${id}/desbloquear`, { motivo: 'Bloqueado por error' }))
    expect(unblocked).toMatchObject({ accion: 'desbloquear', bloqueado: null })
    expectError(await dpo.post(`/proteccion-datos/denuncias/${id}/desbloquear`, { motivo: 'otra vez' }), 'REGISTRO_NO_BLOQUEADO')
    expect(ok(await jefe.get(`/denuncias/${id}`))).not.toHaveProperty('_bloqueado')
    ok(await oficial.put(`/denuncias/${id}`, { prioridad: 'alta' }))
    const decisions = ok(await dpo.get(`/proteccion-datos/decisiones?modulo=denuncias&id=${id}`))
    expect(decisions.records.map((d: any) => d.accion)).toEqual(['desbloquear', 'bloquear'])
    expect(oficialId).toMatch(/^USR-/)
  })

  it('its events reach only those who read it', async () => {
    const base = await listenApp(t.app)
    const jefeStream = await openStream(base, '/eventos?modulos=denuncias', (await newUser(t.app, t.token, 'jefe')).token)
    const adminStream = await openStream(base, '/eventos?modulos=denuncias', t.token)
    try {
      ok(await dpo.post(`/proteccion-datos/denuncias/${other}/bloquear`, { motivo: 'Pendiente de supresión' }))
      ok(await t.admin.put(`/denuncias/${other}`, { prioridad: 'alta' }))
      const visible = ok(await t.admin.post('/denuncias', denuncia('2026-01-01')), 201)._id
      await jefeStream.next((m) => m.data?.registro_id === visible)
      await adminStream.next((m) => m.data?.registro_id === visible)
      expect(jefeStream.messages.filter((m) => m.data?.registro_id === other)).toEqual([])
      expect(adminStream.messages.filter((m) => m.data?.registro_id === other).map((m) => m.event)).toContain('denuncias.actualizado')
      const reads = ok(await t.admin.get(`/auditoria/lecturas?registro=${other}&tipo=bloqueado`))
      expect(reads.total).toBeGreaterThanOrEqual(1)
    } finally {
      jefeStream.close()
      adminStream.close()
    }
  })
})
