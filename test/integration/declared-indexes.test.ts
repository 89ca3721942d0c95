/**
 * Indexes are what modules.yaml asks for (docs/administrator-guide.md
 * "Indexes"): the start builds the declared ones and drops, and reports,
 * those the file no longer asks for; several instances starting at once
 * agree; an unindexed filter still answers with exact totals; a slow list
 * is logged with its filter shape and no values. Read through the
 * database catalog and the service's log.
 */
import { readFileSync } from 'node:fs'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseRegistry } from '../../core/registry/load.js'
import { planSchema } from '../../db/schema-sync.js'
import type { Harness } from '../helpers/app.js'
import { client, ok, type Api } from '../helpers/http.js'
import { edit } from '../helpers/edit-text.js'
import { startTestApp } from '../helpers/test-app.js'
import { usingPostgres } from '../helpers/services.js'

const real = readFileSync('modules.yaml', 'utf8')
const DECLARED = '      operador: { type: string, indexed: true, label: Operador }\n      patrulla_asignada: { type: string, label: Patrulla asignada }\n'
const SALA = '    full_text: [categoria, descripcion, ubicacion, operador, resultado]\n'
/** patrulla_asignada indexed (both ways), operador no longer; nor `_modified` and `_modified_by`. */
const swapped = edit(edit(real, DECLARED, '      operador: { type: string }\n      patrulla_asignada: { type: string, indexed: true, contains_index: true }\n'),
  SALA, `${SALA}    system_fields: { _modified: { indexed: false }, _modified_by: { indexed: false } }\n`)

let h: Harness
let admin: Api

async function indexesOf (table: string): Promise<string[]> {
  return (await h.db.query<{ indexname: string }>('select indexname from pg_indexes where tablename = $1 and schemaname = current_schema() order by 1', [table])).map((r) => r.indexname)
}

function capture (): { lines: () => Array<Record<string, unknown>>, stream: Writable, raw: () => string } {
  const chunks: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { chunks.push(String(chunk)); done() } })
  const raw = (): string => chunks.join('')
  return { stream, raw, lines: () => raw().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>) }
}

const PATRULLAS = ['Zeta Uno', 'Zeta Uno', 'Zeta Uno', 'Lince Dos', 'Lince Dos', 'Águila Tres']

beforeAll(async () => {
  ({ h, admin } = await startTestApp())
  for (const [i, patrulla] of PATRULLAS.entries()) {
    ok(await admin.post('/sala092', { tipo_incidencia: 'normal', descripcion: `Aviso ${i}`, patrulla_asignada: patrulla, operador: `Op ${i % 2}` }), 201)
  }
}, 120_000)
afterAll(async () => { await h.close() })

describe('the indexes modules.yaml declares', () => {
  it('are built, and only they: declared, implied by the role; none for a filter nobody declared', async () => {
    const names = await indexesOf('sala092')
    expect(names).toEqual(expect.arrayContaining([
      'sala092_operador_live_idx', 'sala092_operador_count_idx', // declared
      'sala092_ubicacion_trgm_idx', // contains_index
      'sala092_estado_live_idx', 'sala092_tipo_incidencia_live_idx', 'sala092_fecha_hora_entrada_live_idx', // state, enum, date-time
    ]))
    expect(names.filter((n) => n.includes('patrulla_asignada'))).toEqual([])
    expect(names.filter((n) => n.includes('_trgm_')).sort()).toEqual(['sala092_descripcion_trgm_idx', 'sala092_ubicacion_trgm_idx'])
  })

  it('the history keeps the indexes its readers use: by record and version, by transaction; none by author', async () => {
    expect(await indexesOf('sys_historial')).toEqual(['sys_historial_pkey', 'sys_historial_version_unique', 'sys_historial_xid_idx'])
  })

  it('the history, the chain and module tables keep no planner statistics for columns no query reads by value; the rest keep theirs; the logs are analyzed less often', async () => {
    const targets = async (table: string): Promise<Record<string, number>> => Object.fromEntries((await h.db.query<{ attname: string, target: number }>(
      'select attname, coalesce(attstattarget, -1)::int as target from pg_attribute where attrelid = to_regclass($1) and attnum > 0 and not attisdropped', [table])).map((r) => [r.attname, r.target]))
    const history = await targets('sys_historial')
    for (const c of ['hash', 'campos', 'datos', 'anterior', 'supresion']) expect(history[c], c).toBe(0)
    for (const c of ['modulo', 'registro', 'version', 'xid', 'fecha', 'usuario']) expect(history[c], c).toBe(-1)
    const chain = await targets('sys_cadena')
    for (const c of ['entrada', 'enlace']) expect(chain[c], c).toBe(0)
    for (const c of ['seq', 'historial', 'modulo', 'registro']) expect(chain[c], c).toBe(-1)
    // A module table: its version hash, ciphertext and a password's hash; its own fields and its system fields keep theirs.
    const denuncias = await targets('denuncias')
    for (const c of ['_hash', 'denunciante_dni']) expect(denuncias[c], c).toBe(0)
    for (const c of ['_id', '_created', '_created_by', 'estado', 'tipo', 'denunciante_dni_bidx']) expect(denuncias[c], c).toBe(-1)
    expect((await targets('usuarios')).password_hash).toBe(0)
    // The two append-only logs are analyzed when half of them is new.
    const options = await h.db.query<{ relname: string, reloptions: string[] | null }>(
      "select relname, reloptions from pg_class where relname in ('sys_historial', 'sys_cadena', 'denuncias') order by relname")
    expect(options.map((r) => [r.relname, r.reloptions])).toEqual([
      ['denuncias', null], ['sys_cadena', ['autovacuum_analyze_scale_factor=0.5']], ['sys_historial', ['autovacuum_analyze_scale_factor=0.5']]])
  })

  it('an unindexed filter answers with exact totals: equality, a list, a range, contiene (accents, case), vacio', async () => {
    const total = async (query: string): Promise<number> => ok(await admin.get(`/sala092?limit=1&${query}`)).total
    expect(await total('patrulla_asignada=Zeta%20Uno')).toBe(3)
    expect(await total('patrulla_asignada=Zeta%20Uno&patrulla_asignada=Lince%20Dos')).toBe(5)
    expect(await total('patrulla_asignada[in]=Zeta%20Uno,Lince%20Dos')).toBe(5)
    expect(await total('patrulla_asignada[ne]=Zeta%20Uno')).toBe(3)
    // A range, in the database's collation (where Á sorts depends on it).
    const [above] = await h.db.query<{ n: number }>("select count(*)::int as n from sala092 where patrulla_asignada > 'M' and _deleted is null")
    expect(await total('patrulla_asignada[gt]=M')).toBe(above!.n)
    expect(above!.n).toBeGreaterThanOrEqual(3)
    expect(await total('patrulla_asignada[contiene]=AGUILA')).toBe(1)
    expect(await total('patrulla_asignada[contiene]=uno')).toBe(3)
    expect(await total('patrulla_asignada[vacio]=true')).toBe(0)
    expect(await total('patrulla_asignada=Lince%20Dos&sort=patrulla_asignada')).toBe(2)
    const [truth] = await h.db.query<{ n: number }>("select count(*)::int as n from sala092 where patrulla_asignada = 'Lince Dos' and _deleted is null")
    expect(await total('patrulla_asignada=Lince%20Dos')).toBe(truth!.n)
  })

  it('a slow list is logged at warn with its filter shape and no values', async () => {
    const log = capture()
    const slow = await h.app({ env: { SLOW_LIST: '1ms', LOG_LEVEL: 'warn' }, logStream: log.stream })
    const token = ok(await client(slow).post('/auth/login', { username: 'admin', password: 'admin-password-123' })).token as string
    ok(await client(slow, token).get('/sala092?patrulla_asignada=Zeta%20Uno&estado=pendiente&sort=-fecha_hora_entrada&limit=5'))
    const line = log.lines().find((l) => String(l.msg).startsWith('slow list'))
    expect(line, log.raw()).toMatchObject({ level: 40, modulo: 'sala092', parametros: ['patrulla_asignada', 'estado'], orden: '-fecha_hora_entrada', total: 3 })
    expect(line!.ms).toEqual(expect.any(Number))
    expect(log.raw()).not.toContain('Zeta')
    // Under the threshold (200 ms by default): nothing.
    const quiet = capture()
    const normal = await h.app({ env: { LOG_LEVEL: 'warn' }, logStream: quiet.stream })
    const t2 = ok(await client(normal).post('/auth/login', { username: 'admin', password: 'admin-password-123' })).token as string
    ok(await client(normal, t2).get('/sala092?limit=1'))
    expect(quiet.lines().filter((l) => String(l.msg).startsWith('slow list'))).toEqual([])
    await h.closeApp(slow)
    await h.closeApp(normal)
  })
})

describe('changing what is indexed is an edit and a restart', () => {
  it('the start builds the new indexes, drops those no longer asked for and says so; the next start finds nothing to do', async () => {
    const registry = parseRegistry(swapped, 'temp.yaml')
    const log = capture()
    // Several instances starting at once (on PostgreSQL; the embedded database serves one process, in turn).
    const starts = usingPostgres ? [1, 2] : [1]
    const apps = await Promise.all(starts.map(async () => h.app({ registry, env: { LOG_LEVEL: 'info' }, logStream: log.stream })))
    const names = await indexesOf('sala092')
    expect(names).toEqual(expect.arrayContaining(['sala092_patrulla_asignada_live_idx', 'sala092_patrulla_asignada_count_idx', 'sala092_patrulla_asignada_trgm_idx']))
    expect(names.filter((n) => n.includes('operador'))).toEqual([])
    expect(names.filter((n) => n.includes('_modified'))).toEqual([])
    expect(names).toContain('sala092__created_by_index')
    const drops = log.lines().filter((l) => String(l.msg).startsWith('dropped the indexes'))
    // Reported once: the instance that started second found the catalog already in line.
    expect(drops).toHaveLength(1)
    expect((drops[0]!.indexes as string[]).sort()).toEqual(['sala092__modified_by_index', 'sala092__modified_index', 'sala092_operador_count_idx', 'sala092_operador_live_idx'])
    for (const a of apps) expect(await planSchema(a.orm)).toEqual({ safe: [], destructive: [], renames: [] })
    // The answers are the same; the data untouched.
    const api = client(apps[0]!, ok(await client(apps[0]!).post('/auth/login', { username: 'admin', password: 'admin-password-123' })).token as string)
    expect(ok(await api.get('/sala092?patrulla_asignada=Zeta%20Uno&limit=1')).total).toBe(3)
    expect(ok(await api.get('/sala092?operador=Op%201&limit=1')).total).toBe(3)
    const me = ok(await api.get('/me'))._id as string
    expect(ok(await api.get(`/sala092?_modified_by=${me}&_modified[gte]=2000-01-01%2000:00:00&limit=1`)).total).toBe(PATRULLAS.length)
    for (const a of apps) await h.closeApp(a)
    // And back: the first file's indexes again, the swapped ones reported dropped.
    const back = capture()
    const again = await h.app({ env: { LOG_LEVEL: 'info' }, logStream: back.stream })
    expect((back.lines().find((l) => String(l.msg).startsWith('dropped the indexes'))!.indexes as string[]).sort())
      .toEqual(['sala092_patrulla_asignada_count_idx', 'sala092_patrulla_asignada_live_idx', 'sala092_patrulla_asignada_trgm_idx'])
    expect((await indexesOf('sala092')).filter((n) => n.includes('operador')).length).toBe(2)
    expect((await indexesOf('sala092')).filter((n) => n.includes('_modified')).sort()).toEqual(['sala092__modified_by_index', 'sala092__modified_index'])
    await h.closeApp(again)
  }, 180_000)
})
