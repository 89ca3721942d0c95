/**
 * A client program against the TypeScript client generated from the
 * service's OpenAPI document (openapi-typescript types, openapi-fetch
 * runtime). It is only type-checked, under `tsc --strict`
 * (`npm run openapi:client`): what it shows is that the document lets a
 * client express these calls, and refuses a misspelt field. Never run.
 */
import createClient from 'openapi-fetch'
import type { components, paths } from './generated/api.js'

// A list answers the whole record, or with campos a partial one (docs/decisions.md "A read with campos is a partial record").
type Denuncia = components['schemas']['denunciasRecord'] | components['schemas']['denunciasParcial']
type NewDenuncia = paths['/denuncias']['post']['requestBody']['content']['application/json']

export async function example (token: string): Promise<Denuncia[]> {
  const api = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000', headers: { Authorization: `Bearer ${token}` } })

  // A filtered, sorted, paged list: operators in the campo[op] form.
  const list = await api.GET('/denuncias', {
    params: {
      query: {
        estado: ['pendiente'],
        'prioridad[in]': 'alta,urgente',
        'fecha_hechos[gte]': '2026-01-01 00:00:00',
        'lugar_hechos[contiene]': 'plaza',
        sort: '-fecha_hechos,_id',
        limit: 20,
        offset: 40,
      },
    },
  })
  if (list.error !== undefined) throw new Error(list.error.error)
  const page = list.data.data
  const total: number = page.total
  // _id is always there; the other fields may be null, or absent when campos leaves them out.
  const ids: string[] = page.records.map((r) => r._id)
  const versions: Array<number | undefined> = page.records.map((r) => r._version)
  const deleted: Array<string | null | undefined> = page.records.map((r) => r._deleted)
  void [total, ids, versions, deleted]

  // A create with the required fields; the error envelope is typed too.
  const created = await api.POST('/denuncias', {
    body: {
      denunciante_nombre: 'Juan Pérez',
      tipo: 'hurto',
      fecha_hechos: '2026-06-01 10:30:00',
      lugar_hechos: 'Plaza Mayor',
      descripcion: 'Sustracción de cartera',
      prioridad: 'alta',
      testigos: [{ nombre: 'Luis Gómez', telefono: '600000000' }, { nombre: 'Vecina del 3.º B' }],
    },
  })
  if (created.error !== undefined) {
    const text: 'Datos requeridos' | 'Datos inválidos' | 'JSON mal formado' | string = created.error.error
    throw new Error(text)
  }
  const id: string = created.data.data._id

  // An update with optimistic locking.
  await api.PUT('/denuncias/{id}', { params: { path: { id } }, body: { estado: 'archivada', _version: 1 } })

  // A misspelt field (descripcion → descripción) in a body typed as the
  // document says: the schema rejects unknown keys, so this does not compile.
  // (openapi-fetch 0.17 types an inline `body:` through a mapped type that
  // defeats TypeScript's excess-property check, hence the annotation.)
  const misspelt = {
    denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Calle Real', descripcion: 'x',
    // @ts-expect-error a misspelt field must not compile
    descripción: 'tilde de más',
  } satisfies NewDenuncia
  void misspelt

  // @ts-expect-error a misspelt required field, inline: the real one is missing
  await api.POST('/denuncias', { body: { denunciante_nombre: 'Ana', tipo: 'robo', fecha_hechos: '2026-06-01 10:30:00', lugar_hechos: 'Calle Real', descripción: 'x' } })

  // @ts-expect-error a misspelt filter (estado → estados)
  await api.GET('/denuncias', { params: { query: { estados: ['pendiente'] } } })

  // @ts-expect-error a required field may not be null (the service answers 400 Datos requeridos)
  await api.PUT('/denuncias/{id}', { params: { path: { id } }, body: { tipo: null } })

  // @ts-expect-error a filter the list does not take (a text field is not filterable)
  await api.GET('/denuncias', { params: { query: { descripcion: 'x' } } })

  // @ts-expect-error a misspelt operator
  await api.GET('/denuncias', { params: { query: { 'estado[neq]': 'archivada' } } })

  // @ts-expect-error an enum value the module does not declare
  await api.GET('/denuncias', { params: { query: { estado: ['cerrada'] } } })

  return page.records
}
