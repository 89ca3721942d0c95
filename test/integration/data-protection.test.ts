/**
 * Personal data through its whole life (docs/user-guide.md "Personal data";
 * SPEC S27), through HTTP and the database: the data-protection officer's
 * role (`proteccion_datos: true` in modules.yaml) reads the read log and
 * erases a record's personal data; other roles, `superadmin` included, do
 * not erase; /me says who may do what. After an erasure the values are in
 * no row of the live table or the history (SQL), /verificar still holds and
 * names the erasure, and a change to anything left, or a value written
 * back, still breaks it (docs/decisions.md "Erasing personal data keeps the
 * chain: residual seals").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ok } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { expectError } from '../helpers/errors.js'
import { client } from '../helpers/http.js'
import { setInVersion } from '../helpers/version-row.js'
import { rotateKeys } from '../../bin/rotate-keys.js'
import { TEST_KEY } from '../helpers/app.js'
import { redisEnv } from '../helpers/services.js'

let t: TestApp
const query = (text: string, params: unknown[]): Promise<any[]> => t.h.db.query(text, params)
let dpo: { id: string, token: string }
let consulta: { id: string, token: string }

beforeAll(async () => {
  t = await startTestApp()
  dpo = await newUser(t.app, t.token, 'delegado_proteccion_datos')
  consulta = await newUser(t.app, t.token, 'consulta')
})
afterAll(async () => { await t?.h.close() })

describe('the data-protection officer', () => {
  it('reads the read log by record, user and period; a consulta user may not; /me says who may', async () => {
    const created = ok(await t.admin.post('/denuncias', { denunciante_nombre: 'Ana Gil', denunciante_dni: '12345678Z', tipo: 'hurto', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Plaza Mayor', descripcion: 'Cartera' }), 201)
    ok(await client(t.app, dpo.token).get(`/denuncias/${created._id}`))
    const log = ok(await client(t.app, dpo.token).get(`/auditoria/lecturas?modulo=denuncias&registro=${created._id}&usuario=${dpo.id}`))
    expect(log.records.map((r: any) => [r.tipo, r.usuario, r.registro, r.campos])).toEqual([['lectura', dpo.id, created._id, ['denunciante_dni']]])
    expectError(await client(t.app, consulta.token).get('/auditoria/lecturas'), 'SIN_PERMISOS')

    const me = async (token: string): Promise<any> => ok(await client(t.app, token).get('/me'))
    expect(await me(dpo.token)).toMatchObject({ rol: 'delegado_proteccion_datos', lecturas: true, proteccion_datos: true })
    expect(await me(t.token)).toMatchObject({ rol: 'superadmin', lecturas: true, proteccion_datos: false })
    expect(await me(consulta.token)).toMatchObject({ rol: 'consulta', lecturas: false, proteccion_datos: false })
  })
})

const DENUNCIA = {
  denunciante_nombre: 'Begoña Núñez Peña',
  denunciante_dni: '12345678Z',
  denunciante_telefono: '+34 600 111 222',
  denunciante_email: 'begona@example.es',
  tipo: 'robo',
  fecha_hechos: '2026-03-01 10:30:00',
  lugar_hechos: 'Plaza de la Constitución',
  descripcion: 'Sustracción de una bicicleta',
  testigos: [{ nombre: 'Łukasz Żółć', dni: '00000000T', telefono: '+34 600 333 444', declaracion: 'Vio a dos personas cortar el candado' }],
}
/** Every value above that is personal data: none may survive an erasure anywhere. */
const PERSONAL = ['Begoña', '12345678Z', '600 111 222', 'begona@example.es', 'Łukasz', '00000000T', '600 333 444', 'cortar el candado']

describe('erasure', () => {

  const dpoApi = (): ReturnType<typeof client> => client(t.app, dpo.token)
  const erase = async (id: string, motivo = 'Plazo de conservación cumplido'): Promise<any> => dpoApi().post(`/proteccion-datos/denuncias/${id}/suprimir`, { motivo })
  const verdict = async (id: string): Promise<any> => ok(await t.admin.get(`/denuncias/${id}/verificar`))
  /** Everything the database holds of a record: its live row and its history, as text. */
  const stored = async (id: string): Promise<string> => {
    const live = await query('select row_to_json(d)::text as t from denuncias d where "_id" = $1', [id])
    const history = await query('select row_to_json(h)::text as t from sys_historial h where registro = $1', [id])
    return [...live, ...history].map((r) => r.t).join('\n')
  }

  async function erased (): Promise<string> {
    const id = ok(await t.admin.post('/denuncias', DENUNCIA), 201)._id as string
    ok(await t.admin.put(`/denuncias/${id}`, { prioridad: 'alta', denunciante_telefono: '+34 600 111 223' }))
    ok(await t.admin.put(`/denuncias/${id}`, { lugar_hechos: 'Calle Mayor 1' }))
    return id
  }

  it('destroys the values in every stored version, and /verificar holds and names the erasure', async () => {
    const id = await erased()
    expect(await stored(id)).toContain('Begoña')
    const res = ok(await erase(id))
    expect(res).toMatchObject({ _id: id, _version: 4, supresion: { version: 4, usuario: dpo.id, motivo: 'Plazo de conservación cumplido' } })
    expect(res.supresion.campos).toEqual(['denunciante_nombre', 'denunciante_dni', 'denunciante_telefono', 'denunciante_email', 'testigos.nombre', 'testigos.dni', 'testigos.telefono', 'testigos.declaracion'])
    const text = await stored(id)
    for (const value of PERSONAL) expect(text).not.toContain(value)
    // The encrypted values (ciphertexts) and their blind indexes are gone too.
    expect(await query('select denunciante_dni, denunciante_dni_bidx, denunciante_telefono from denuncias where "_id" = $1', [id])).toEqual([{ denunciante_dni: null, denunciante_dni_bidx: null, denunciante_telefono: null }])
    expect(await query("select version from sys_historial where registro = $1 and (anterior->>'denunciante_dni' is not null or anterior->>'denunciante_dni_bidx' is not null) ", [id])).toEqual([])

    expect(await verdict(id)).toEqual({ valido: true, supresiones: [{ ...res.supresion }] })
    // What is not personal stays, and so does the history's shape.
    const record = ok(await t.admin.get(`/denuncias/${id}`))
    expect(record).toMatchObject({ _version: 4, tipo: 'robo', lugar_hechos: 'Calle Mayor 1', prioridad: 'alta', denunciante_nombre: null, denunciante_dni: null })
    expect(record.testigos).toEqual([{ nombre: null, dni: null, telefono: null, declaracion: null }])
    const versions = ok(await t.admin.get(`/denuncias/${id}/historial`)).versiones
    expect(versions.map((v: any) => v.accion)).toEqual(['crear', 'editar', 'editar', 'suprimir'])
    expect(versions[3].supresion.versiones.map((v: any) => v.version)).toEqual([1, 2, 3])
    // The search index forgets the name too.
    expect(ok(await t.admin.get('/denuncias?q=Begoña')).records.map((r: any) => r._id)).not.toContain(id)
    // A second erasure finds nothing left.
    expectError(await erase(id), 'SIN_DATOS_PERSONALES')
  })

  it('still breaks on a change to what is left, a value written back, or an edited certificate', async () => {
    const id = await erased()
    ok(await erase(id))
    for (const [version, key, value] of [[1, 'tipo', 'hurto'], [2, 'denunciante_nombre', 'Begoña Núñez Peña'], [3, 'lugar_hechos', 'Otra calle']] as const) {
      const undo = await setInVersion(query, 'denuncias', id, version, key, value)
      expect(await verdict(id), `${key} in version ${version}`).toMatchObject({ valido: false, version_rota: version })
      await undo()
      expect((await verdict(id)).valido).toBe(true)
    }
    await query("update sys_historial set supresion = jsonb_set(supresion, '{motivo}', '\"Otro motivo\"') where registro = $1 and version = 4", [id])
    expect(await verdict(id)).toMatchObject({ valido: false, version_rota: 4 })
  })

  it('keeps working after it: an edit, new personal data and a second erasure; every version holds', async () => {
    const id = await erased()
    ok(await erase(id))
    // A required personal field left null by the erasure does not block an edit of another field.
    ok(await t.admin.put(`/denuncias/${id}`, { prioridad: 'baja' }))
    ok(await t.admin.put(`/denuncias/${id}`, { denunciante_nombre: 'Nombre nuevo', denunciante_dni: '87654321X' }))
    expect((await verdict(id)).valido).toBe(true)
    const second = ok(await erase(id, 'Solicitud del interesado'))
    expect(second.supresion.campos).toEqual(['denunciante_nombre', 'denunciante_dni'])
    const v = await verdict(id)
    expect(v.valido).toBe(true)
    expect(v.supresiones.map((s: any) => s.motivo)).toEqual(['Plazo de conservación cumplido', 'Solicitud del interesado'])
    expect(await stored(id)).not.toContain('Nombre nuevo')
  })

  it('refuses other roles, an unknown module, an empty reason, and a record whose chain does not hold (erasing nothing)', async () => {
    const id = ok(await t.admin.post('/denuncias', DENUNCIA), 201)._id as string
    expectError(await t.admin.post(`/proteccion-datos/denuncias/${id}/suprimir`, { motivo: 'x' }), 'SIN_PERMISOS')
    expectError(await client(t.app, consulta.token).post(`/proteccion-datos/denuncias/${id}/suprimir`, { motivo: 'x' }), 'SIN_PERMISOS')
    expectError(await dpoApi().post(`/proteccion-datos/denuncia/${id}/suprimir`, { motivo: 'x' }), 'MODULO_NO_ENCONTRADO')
    expectError(await dpoApi().post('/proteccion-datos/denuncias/DEN-2026-99999/suprimir', { motivo: 'x' }), 'REGISTRO_NO_ENCONTRADO')
    const blank = await dpoApi().post(`/proteccion-datos/denuncias/${id}/suprimir`, { motivo: '   ' })
    expect(blank.status).toBe(400)
    expect(blank.body.detalles).toEqual([{ campo: 'motivo', mensaje: 'no puede estar vacío' }])
    expect((await dpoApi().post(`/proteccion-datos/denuncias/${id}/suprimir`, {})).status).toBe(400)

    await query('update denuncias set tipo = $2 where "_id" = $1', [id, 'hurto'])
    const refused = await erase(id)
    expectError(refused, 'INTEGRIDAD_NO_VERIFICADA')
    expect(refused.body.detalles[0].mensaje).toMatch(/\(versión 1\); no se ha suprimido nada/)
    expect(await stored(id)).toContain('Begoña')
    expect(ok(await t.admin.get(`/denuncias/${id}/historial`)).versiones).toHaveLength(1)
  })
})

describe("a person's data", () => {
  const PERSON = '11111111H'
  const search = async (dni: string, token = dpo.token): Promise<any> => client(t.app, token).get(`/proteccion-datos/interesado?dni=${encodeURIComponent(dni)}`)
  const base = { tipo: 'hurto', fecha_hechos: '2026-03-01 10:30:00', lugar_hechos: 'Calle Mayor', descripcion: 'Cartera' }

  it('finds the DNI in a denuncia, a witness of another and a sanción, not elsewhere, with who read each; the search is logged without it', async () => {
    const complainant = ok(await t.admin.post('/denuncias', { ...base, denunciante_nombre: 'Persona Buscada', denunciante_dni: PERSON }), 201)._id as string
    const witness = ok(await t.admin.post('/denuncias', { ...base, denunciante_nombre: 'Otra', denunciante_dni: '22222222J', testigos: [{ nombre: 'Alguien', dni: '33333333P' }, { nombre: 'Persona Buscada', dni: PERSON }] }), 201)._id as string
    const sancion = ok(await t.admin.post('/sanciones', { tipo: 'trafico', infractor_nombre: 'Persona Buscada', infractor_dni: PERSON, fecha_infraccion: '2026-03-02 09:00:00', lugar_infraccion: 'Avenida', importe: 90 }), 201)._id as string
    const elsewhere = ok(await t.admin.post('/denuncias', { ...base, denunciante_nombre: 'Nadie', denunciante_dni: '44444444A', testigos: [{ nombre: 'Tampoco', dni: '55555555K' }] }), 201)._id as string
    ok(await client(t.app, consulta.token).get(`/sanciones/${sancion}`))

    // Typed as a person would: lower case, spaces around.
    const found = ok(await search(` ${PERSON.toLowerCase()} `))
    const ids = found.registros.map((r: any) => r.id)
    expect(ids).toEqual(expect.arrayContaining([complainant, witness, sancion]))
    expect(ids).not.toContain(elsewhere)
    const byId = new Map<string, any>(found.registros.map((r: any) => [r.id, r]))
    expect(byId.get(complainant)).toMatchObject({ modulo: 'denuncias', campos: ['denunciante_dni'], eliminado: false })
    expect(byId.get(witness)).toMatchObject({ modulo: 'denuncias', campos: ['testigos.dni'] })
    expect(byId.get(sancion)).toMatchObject({ modulo: 'sanciones', campos: ['infractor_dni'] })
    // Who read the sanción (the create's answer, then consulta's read without descifrar is no read of encrypted data).
    expect(byId.get(sancion).lecturas.records.map((r: any) => [r.tipo, r.usuario])).toEqual([['lectura', expect.stringMatching(/^USR-/)]])
    expect(found.no_buscables).toEqual([])

    const logged = ok(await client(t.app, dpo.token).get(`/auditoria/lecturas?tipo=interesado&usuario=${dpo.id}`))
    expect(logged.records[0]).toMatchObject({ tipo: 'interesado', usuario: dpo.id, registro: null, coincidencias: found.total, campos: ['denuncias', 'sanciones'] })
    expect(await query("select count(*)::int as n from sys_lecturas where tipo = 'interesado' and (ruta like $1 or filtro like $1 or campos::text like $1)", [`%${PERSON}%`])).toEqual([{ n: 0 }])

    // The witnesses' index is the one their values give: copied from another record, /verificar names it.
    expect(ok(await t.admin.get(`/denuncias/${witness}/verificar`)).valido).toBe(true)
    await query('update denuncias set testigos_bidx = (select testigos_bidx from denuncias where "_id" = $2) where "_id" = $1', [witness, elsewhere])
    expect(ok(await t.admin.get(`/denuncias/${witness}/verificar`))).toMatchObject({ valido: false, motivo: expect.stringContaining('índice') })
    expect(ok(await search(PERSON)).registros.map((r: any) => r.id)).not.toContain(witness)

    // Erased, the complainant's denuncia no longer holds it.
    ok(await client(t.app, dpo.token).post(`/proteccion-datos/denuncias/${complainant}/suprimir`, { motivo: 'Solicitud del interesado' }))
    expect(ok(await search(PERSON)).registros.map((r: any) => r.id)).not.toContain(complainant)
  })

  it('a record written before the witnesses\' DNI was searchable verifies, is not found, and is once rotate-keys --reindexar has run', async () => {
    const id = ok(await t.admin.post('/denuncias', { ...base, denunciante_nombre: 'Antigua', testigos: [{ nombre: 'Testigo antiguo', dni: '66666666Q' }] }), 201)._id as string
    await query('update denuncias set testigos_bidx = null where "_id" = $1', [id])
    expect(ok(await t.admin.get(`/denuncias/${id}/verificar`)).valido).toBe(true)
    expect(ok(await search('66666666Q')).total).toBe(0)
    const h = t.h
    await rotateKeys({
      batchSize: 200, newIndexKey: false, reindex: true, quiet: true, ...(h.db.embedded !== undefined && { embedded: h.db.embedded }),
      env: { ...(h.db.url !== undefined && { DATABASE_URL: h.db.url }), ...redisEnv(), REDIS_PREFIX: h.redisPrefix, JWT_SECRET: h.config.jwtSecret, ENCRYPTION_KEY: TEST_KEY, DATA_DIR: h.config.dataDir, MODULES_FILE: h.config.modulesFile, TZ: h.config.timeZone, LOG_LEVEL: 'silent' },
    })
    expect(ok(await search('66666666Q')).registros).toMatchObject([{ id, campos: ['testigos.dni'] }])
    expect(ok(await t.admin.get(`/denuncias/${id}/verificar`)).valido).toBe(true)
  }, 60_000)

  it('refuses other roles, a text that is no DNI and unknown parameters', async () => {
    expectError(await search(PERSON, t.token), 'SIN_PERMISOS')
    const bad = await search('12345678A')
    expect(bad.status).toBe(400)
    expect(bad.body.detalles[0].campo).toBe('dni')
    expect((await client(t.app, dpo.token).get('/proteccion-datos/interesado')).status).toBe(400)
    expect((await client(t.app, dpo.token).get(`/proteccion-datos/interesado?dni=${PERSON}&nombre=x`)).body.detalles).toEqual([{ campo: 'nombre', mensaje: 'parámetro desconocido: solo dni' }])
  })
})
