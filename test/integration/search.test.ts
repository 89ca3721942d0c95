/**
 * Search (docs/user-guide.md "Search") over HTTP on the shipped modules.yaml: `contiene` on
 * string and text fields (case, accents, LIKE characters), `q` (Spanish
 * stemming, accents, all words, filters, sort, paging, relevance, exact
 * total; prefixes in search-prefix.test.ts), `vacio` on every kind of field, the 400s and 403s, row-level scope,
 * and EXPLAIN of the queries over 100,000 rows (every search uses an index
 * of the module table, never a sequential scan of it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { RawQueryFragment } from '@mikro-orm/core'
import { ensureSearchSupport } from '../../db/search-setup.js'
import { bulkLoad } from '../helpers/bulk-load.js'
import { planNodes } from '../helpers/explain.js'
import type { Harness } from '../helpers/app.js'
import { client, ok, type Api } from '../helpers/http.js'
import { newUser } from '../helpers/users.js'
import { expectError } from '../helpers/errors.js'
import { startTestApp } from '../helpers/test-app.js'

type Rec = Record<string, any>

let h: Harness, app: FastifyInstance, admin: Api, adminToken: string
let staffId: string
const den = {} as Record<'bici' | 'movil' | 'pct' | 'robos', string>


const qs = (...pairs: Array<[string, string]>): string => `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`

/** The ids a search finds (every page; limit 1000), and its total. */
async function found (api: Api, query: string): Promise<{ ids: string[], total: number, records: Rec[] }> {
  const data = ok(await api.get(`/denuncias${query}${query.includes('?') ? '&' : '?'}limit=1000`))
  return { ids: (data.records as Rec[]).map((r) => r._id as string), total: data.total, records: data.records }
}
const sorted = (a: string[]): string[] => [...a].sort()

/** A complaint with the required fields; `set` overrides any. */
async function denuncia (set: Record<string, unknown>, api = admin): Promise<string> {
  return ok(await api.post('/denuncias', {
    denunciante_nombre: 'Nombre Apellido', tipo: 'otro', fecha_hechos: '2026-03-15 10:30:00', lugar_hechos: 'Sin datos', descripcion: 'Sin datos', ...set,
  }), 201)._id as string
}

beforeAll(async () => {
  ({ h, app, token: adminToken, admin } = await startTestApp())
  staffId = ok(await admin.post('/personal', { tip: 'TIP-1', nif: '12345678Z', nombre: 'Ana', apellidos: 'Pérez', escala: 'oficial' }), 201)._id
  den.bici = await denuncia({ descripcion: 'Robo de una Bicicleta roja junto al camión de reparto', lugar_hechos: 'Calle Mayor', prioridad: 'alta', denunciante_email: 'ana@example.org', testigos: [{ nombre: 'Luis' }], denunciante_dni: '11111111H', agente_asignado: staffId })
  den.movil = await denuncia({ descripcion: 'Hurto de un móvil', lugar_hechos: 'Plaza de España', denunciante_email: '', testigos: [], observaciones: '' })
  den.pct = await denuncia({ descripcion: 'Cartel con 50% de descuento_especial', lugar_hechos: 'Avenida', observaciones: 'Revisar' })
  den.robos = await denuncia({ descripcion: 'Robos reiterados de camiones', lugar_hechos: 'Polígono', prioridad: 'baja', denunciante_dni: '' })
})
afterAll(async () => { await h.close() })

describe('contiene', () => {
  it('on a text field (not declared filterable): case- and accent-insensitive substring', async () => {
    expect((await found(admin, qs(['descripcion[contiene]', 'bicicleta']))).ids).toEqual([den.bici])
    expect((await found(admin, qs(['descripcion[contiene]', 'BICI']))).ids).toEqual([den.bici])
    expect(sorted((await found(admin, qs(['descripcion[contiene]', 'camion']))).ids)).toEqual(sorted([den.bici, den.robos]))
    expect(sorted((await found(admin, qs(['descripcion[contiene]', 'CAMIÓN']))).ids)).toEqual(sorted([den.bici, den.robos]))
    expect((await found(admin, qs(['descripcion[contiene]', 'movil']))).ids).toEqual([den.movil])
  })

  it('on a string field, the same', async () => {
    expect((await found(admin, qs(['lugar_hechos[contiene]', 'espana']))).ids).toEqual([den.movil])
    expect((await found(admin, qs(['lugar_hechos[contiene]', 'POLIGONO']))).ids).toEqual([den.robos])
  })

  it('%, _ and \\ are literal characters', async () => {
    expect((await found(admin, qs(['descripcion[contiene]', '%']))).ids).toEqual([den.pct])
    expect((await found(admin, qs(['descripcion[contiene]', '_']))).ids).toEqual([den.pct])
    expect((await found(admin, qs(['descripcion[contiene]', '0%_d']))).total).toBe(0)
    expect((await found(admin, qs(['descripcion[contiene]', '\\']))).total).toBe(0)
  })

  it('on an enum field: the declared values containing the text', async () => {
    expect((await found(admin, qs(['prioridad[contiene]', 'ALT']))).ids).toEqual([den.bici])
  })
})

describe('q', () => {
  it('Spanish stemming with accents folded; every word must match; exact total', async () => {
    const robo = await found(admin, qs(['q', 'robo']))
    expect(sorted(robo.ids)).toEqual(sorted([den.bici, den.robos]))
    expect(robo.total).toBe(2)
    expect(sorted((await found(admin, qs(['q', 'robos']))).ids)).toEqual(sorted([den.bici, den.robos]))
    expect(sorted((await found(admin, qs(['q', 'camion']))).ids)).toEqual(sorted([den.bici, den.robos]))
    expect(sorted((await found(admin, qs(['q', 'CAMIONES']))).ids)).toEqual(sorted([den.bici, den.robos]))
    expect((await found(admin, qs(['q', 'robo bicicletas']))).ids).toEqual([den.bici])
    expect((await found(admin, qs(['q', 'robo patinete']))).total).toBe(0)
    // string fields too (lugar_hechos), not only text
    expect((await found(admin, qs(['q', 'españa hurto']))).ids).toEqual([den.movil])
  })

  it('searches no encrypted field', async () => {
    expect((await found(admin, qs(['q', '11111111H']))).total).toBe(0)
  })

  it('combines with filters, sort and paging', async () => {
    expect((await found(admin, qs(['q', 'robo'], ['prioridad', 'alta']))).ids).toEqual([den.bici])
    expect((await found(admin, qs(['q', 'robo'], ['sort', 'prioridad']))).ids).toEqual([den.bici, den.robos])
    expect((await found(admin, qs(['q', 'robo'], ['sort', '-prioridad']))).ids).toEqual([den.robos, den.bici])
    const p1 = ok(await admin.get(`/denuncias${qs(['q', 'robo'], ['limit', '1'])}`))
    const p2 = ok(await admin.get(`/denuncias${qs(['q', 'robo'], ['limit', '1'], ['offset', '1'])}`))
    expect([p1.total, p2.total]).toEqual([2, 2])
    expect(sorted([p1.records[0]._id, p2.records[0]._id])).toEqual(sorted([den.bici, den.robos]))
  })

  it('with no sort, the best matches first, then the newest', async () => {
    const strong = await denuncia({ descripcion: 'Furgoneta robada: la furgoneta blanca, una furgoneta de reparto', lugar_hechos: 'Furgoneta' })
    const weak = await denuncia({ descripcion: 'Aparece una furgoneta' })
    const weak2 = await denuncia({ descripcion: 'Otra furgoneta' })
    expect((await found(admin, qs(['q', 'furgoneta']))).ids).toEqual([strong, weak2, weak])
    expect((await found(admin, qs(['q', 'furgoneta'], ['sort', '_created']))).ids).toEqual([strong, weak, weak2])
  })

  it('a stop word is ignored unless it is the last word (search-prefix.test.ts: prefixes)', async () => {
    expect((await found(admin, qs(['q', 'hurto del movil']))).ids).toEqual([den.movil]) // the record says "de"
    expect((await found(admin, qs(['q', 'hurto del']))).total).toBe(0) // the start of a word: none starts with "del"
  })
})

describe('vacio', () => {
  it('string: null or empty string / a value', async () => {
    const empty = await found(admin, qs(['denunciante_email[vacio]', 'true']))
    expect(empty.ids).toContain(den.movil)
    expect(empty.ids).not.toContain(den.bici)
    expect((await found(admin, qs(['denunciante_email[vacio]', 'false']))).ids).toEqual([den.bici])
  })

  it('ref, array and text', async () => {
    expect((await found(admin, qs(['agente_asignado[vacio]', 'false']))).ids).toEqual([den.bici])
    expect((await found(admin, qs(['agente_asignado[vacio]', 'true']))).ids).not.toContain(den.bici)
    expect((await found(admin, qs(['testigos[vacio]', 'false']))).ids).toEqual([den.bici])
    const noWitness = (await found(admin, qs(['testigos[vacio]', 'true']))).ids
    expect(noWitness).toContain(den.movil) // []
    expect(noWitness).toContain(den.pct) // null
    expect((await found(admin, qs(['observaciones[vacio]', 'false']))).ids).toEqual([den.pct])
    expect((await found(admin, qs(['observaciones[vacio]', 'true']))).ids).toContain(den.movil) // ''
  })

  it('encrypted searchable field: through its blind index, for callers who may decrypt', async () => {
    expect((await found(admin, qs(['denunciante_dni[vacio]', 'false']))).ids).toEqual([den.bici])
    const none = (await found(admin, qs(['denunciante_dni[vacio]', 'true']))).ids
    expect(none).toContain(den.robos) // ''
    expect(none).toContain(den.movil) // null
    expect(none).not.toContain(den.bici)
    const consulta = client(app, (await newUser(app, adminToken, 'consulta')).token)
    expectError(await consulta.get('/denuncias?denunciante_dni[vacio]=false'), 'SIN_PERMISOS')
    // an oficial decrypts only own records: the filter finds only those
    const oficial = await newUser(app, adminToken, 'oficial')
    const api = client(app, oficial.token)
    const own = await denuncia({ denunciante_dni: '22222222J' }, api)
    expect((await found(api, qs(['denunciante_dni[vacio]', 'false']))).ids).toEqual([own])
  })

  it('other values and fields that cannot be filtered: 400', async () => {
    for (const v of ['yes', '1', '', 'TRUE']) expectError(await admin.get(`/denuncias${qs(['estado[vacio]', v])}`), 'DATOS_INVALIDOS')
    expectError(await admin.get('/denuncias?denunciante_telefono[vacio]=true'), 'DATOS_INVALIDOS') // encrypted, not searchable
    expectError(await admin.get('/usuarios?password[vacio]=true'), 'DATOS_INVALIDOS')
  })
})

describe('400s', () => {
  it('bad operators and q; no SQL fragment is left behind by a search, run or refused', async () => {
    const before = RawQueryFragment.checkCacheSize()
    expectError(await admin.get('/sanciones?importe[contiene]=5'), 'DATOS_INVALIDOS')
    expectError(await admin.get('/denuncias?denunciante_dni[contiene]=1234'), 'DATOS_INVALIDOS')
    expectError(await admin.get('/denuncias?descripcion=robo'), 'DATOS_INVALIDOS') // text: contiene and vacio only
    expectError(await admin.get('/denuncias?sort=descripcion'), 'DATOS_INVALIDOS')
    expectError(await admin.get('/denuncias?testigos[contiene]=Luis'), 'DATOS_INVALIDOS')
    expectError(await admin.get('/denuncias?q='), 'DATOS_INVALIDOS')
    expectError(await admin.get('/denuncias?q=a&q=b'), 'DATOS_INVALIDOS')
    expectError(await admin.get(`/denuncias${qs(['q', 'x'.repeat(501)])}`), 'DATOS_INVALIDOS')
    expectError(await admin.get('/denuncias?descripcion[vacios]=true'), 'DATOS_INVALIDOS')
    expectError(await client(app, (await newUser(app, adminToken, 'consulta')).token).get('/denuncias?q=robo&denunciante_dni[vacio]=true'), 'SIN_PERMISOS')
    await found(admin, qs(['q', 'robo'], ['descripcion[contiene]', 'bici'], ['observaciones[vacio]', 'true']))
    expect(RawQueryFragment.checkCacheSize()).toBe(before)
  })
})

describe('row-level scope applies to every search', () => {
  it('an agente finds only own records', async () => {
    const p = ok(await admin.post('/personal', { tip: 'TIP-2', nif: '87654321X', nombre: 'Eva', apellidos: 'Ruiz', escala: 'oficial' }), 201)._id
    const agente = await newUser(app, adminToken, 'agente')
    ok(await admin.put(`/usuarios/${agente.id}`, { personal_id: p }))
    const api = client(app, agente.token)
    const mine = await denuncia({ descripcion: 'Patinete eléctrico sustraído', agente_asignado: p, observaciones: 'patinete' })
    const other = await denuncia({ descripcion: 'Patinete eléctrico sustraído', observaciones: 'patinete' })
    expect((await found(admin, qs(['q', 'patinete']))).total).toBe(2)
    expect(await found(api, qs(['q', 'patinete']))).toMatchObject({ ids: [mine], total: 1 })
    expect(await found(api, qs(['descripcion[contiene]', 'PATINETE ELECTRICO']))).toMatchObject({ ids: [mine], total: 1 })
    expect(await found(api, qs(['observaciones[vacio]', 'false']))).toMatchObject({ ids: [mine], total: 1 })
    expect(other).not.toBe(mine)
  })
})

describe('over 100,000 rows', () => {
  it('every search is served by an index of the table (EXPLAIN: no sequential scan) and counts exactly', async () => {
    // 1 row in 500 says "bicicleta", 1 in 1000 has observaciones, testigos, an email.
    await bulkLoad(h.db, 'denuncias', `
      insert into denuncias ("_id", "_created", "_created_by", "_modified", "_modified_by", "_version", "_hash",
                             denunciante_nombre, denunciante_email, tipo, fecha_hechos, lugar_hechos, descripcion, observaciones, testigos, estado, prioridad)
      select 'DEN-1990-' || lpad(i::text, 6, '0'), now() - i * interval '1 second', 'USR-1990-00001', now(), 'USR-1990-00001', 1, repeat('0', 64),
             'Vecino ' || i, case when i % 1000 = 0 then 'v' || i || '@example.org' end, 'hurto', now(), 'Calle ' || (i % 977),
             case when i % 500 = 0 then 'Sustracción de una bicicleta de montaña número ' || i
                  else 'Sustracción de cartera en la vía pública, número ' || i end,
             case when i % 1000 = 0 then 'Pendiente de revisar' end,
             case when i % 1000 = 0 then '[{"nombre": "Testigo"}]'::jsonb end,
             'pendiente', 'media'
      from generate_series(1, 100000) as i`)
    await h.db.query('analyze denuncias')
    const searches: Array<[string, number]> = [
      [qs(['descripcion[contiene]', 'BICICLETA de montaña']), 200],
      [qs(['denunciante_nombre[contiene]', 'vecino 4242']), 11], // 4242, 42420…42429
      [qs(['q', 'bicicletas montaña']), 200],
      [qs(['q', 'bicicleta'], ['sort', '-_created']), 200 + 1],
      [qs(['q', 'bicic montañ']), 200], // prefixes
      [qs(['q', 'bic']), 200 + 1],
      [qs(['q', '9999']), 11], // 9999, 99990…99999
      [qs(['observaciones[vacio]', 'false']), 100 + 3], // + the fixtures above
      [qs(['testigos[vacio]', 'false']), 100 + 1],
      [qs(['denunciante_email[vacio]', 'false']), 100 + 1],
    ]
    const seen: Array<{ sql: string, bindings: unknown[] }> = []
    const knex = app.orm.em.getConnection().getKnex()
    const onQuery = (q: { sql: string, bindings?: unknown[] }): void => { seen.push({ sql: q.sql, bindings: q.bindings ?? [] }) }
    for (const [query, total] of searches) {
      seen.length = 0
      knex.on('query', onQuery)
      try {
        expect(ok(await admin.get(`/denuncias${query}&limit=20`)).total, query).toBe(total)
      } finally {
        knex.off('query', onQuery)
      }
      // The request's statements only: the retention review (its first check a minute after start) also reads the table.
      const queries = seen.filter((q) => /from "denuncias"/.test(q.sql) && !/^insert into "sys_revision"/.test(q.sql))
      expect(queries, query).toHaveLength(2) // the page and its total
      for (const q of queries) {
        // The stored search document is matched and ranked, never read out.
        expect(q.sql.split(' from ')[0], q.sql).not.toMatch(/_search_|\.\*/)
        const nodes = await planNodes(h.db, q)
        const onTable = nodes.filter((x) => x['Relation Name'] === 'denuncias')
        expect(onTable.map((x) => x['Node Type']), `${query}: ${q.sql}`).not.toContain('Seq Scan')
        expect(nodes.some((x) => /Index/.test(String(x['Node Type'])) && String(x['Index Name'] ?? '').startsWith('denuncias')), `${query}: ${q.sql}`).toBe(true)
        // q without a sort: the stored document's GIN index answers the (prefix) query.
        if (query.startsWith('?q=') && !query.includes('sort')) {
          expect(nodes.some((x) => x['Node Type'] === 'Bitmap Index Scan' && /^denuncias_search_[0-9a-f]{8}_idx$/.test(String(x['Index Name']))), `${query}: ${q.sql}`).toBe(true)
        }
      }
    }
  }, 300_000)
})

describe('search_fold in the database', () => {
  const fold = async (schema: string): Promise<string | undefined> => (await h.db.query<{ src: string }>(
    "select p.prosrc as src from pg_proc p join pg_namespace n on n.oid = p.pronamespace where p.proname = 'search_fold' and n.nspname = $1", [schema]))[0]?.src

  it('as a superuser: calls unaccent\'s C entry point, and PostgreSQL inlines it into the query', async () => {
    const schema = (await h.db.query<{ s: string }>('select current_schema() as s'))[0]!.s
    expect(await fold(schema)).toMatch(/^ select lower\(".+"\.search_unaccent\('".+"\.unaccent'::regdictionary, \$1\)\) $/)
    const plan = (await h.db.query<{ 'QUERY PLAN': string }>("explain select 1 from denuncias where search_fold(descripcion) like '%bici%'")).map((r) => r['QUERY PLAN']).join('\n')
    expect(plan).toMatch(/lower\(search_unaccent\('unaccent'::regdictionary, descripcion\)\)/)
  })

  it('as a role that may not create C functions: a PL/pgSQL wrapper (kept compiled for the session), the same text', async () => {
    const role = `fold_${process.pid}`
    const em = app.orm.em.fork()
    const run = async (sql: string): Promise<Array<Record<string, unknown>>> => em.getConnection().execute(sql, [], 'all', em.getTransactionContext())
    // In a transaction that is rolled back: a schema of its own, used by a role that is no superuser.
    const seen = await em.transactional(async (tem) => {
      const exec = async (sql: string): Promise<Array<Record<string, unknown>>> => tem.getConnection().execute(sql, [], 'all', tem.getTransactionContext())
      await exec(`create role ${role} nologin; create schema fold_test authorization ${role}; set local search_path = fold_test, public; set local role ${role}`)
      await ensureSearchSupport(tem as never)
      const [row] = await exec("select p.prosrc as src, l.lanname as language, fold_test.search_fold('Camión ÁÉÍÓÚ Ñandú') as folded from pg_proc p join pg_language l on l.oid = p.prolang where p.proname = 'search_fold' and p.pronamespace = 'fold_test'::regnamespace")
      throw Object.assign(new Error('rollback'), { row })
    }).catch((err: { row?: Record<string, unknown> }) => err.row)
    expect(seen).toEqual({ src: expect.stringMatching(/^ begin return lower\(".+"\.unaccent\('".+"\.unaccent'::regdictionary, \$1\)\); end $/), language: 'plpgsql', folded: 'camion aeiou nandu' })
    expect(await run(`select 1 from pg_roles where rolname = '${role}'`)).toEqual([]) // rolled back
  })
})
