/**
 * A client program against the SDK @hey-api/openapi-ts generates from the
 * service's OpenAPI document (`npm run openapi:sdk`, into the git-ignored
 * test/client/generated/sdk). It is only type-checked, under `tsc --strict`
 * (test/client/tsconfig.sdk.json): what it shows is that the document lets
 * a client list a module with typed filters and update a record against
 * the version it read (If-Match), and refuses what the service refuses;
 * that a read with `o` groups, `campos` and `expandir` is typed as the
 * whole record or a partial one, its refs an id or the related record.
 * Never run.
 */
import { createClient } from './generated/sdk/client/index.js'
import { getDenuncias, listDenuncias, updateDenuncias } from './generated/sdk/sdk.gen.js'
import type { DenunciasParcial, DenunciasRecord, Error as ApiError } from './generated/sdk/types.gen.js'

/** A list or a GET by id answers the whole record, or with campos a partial one (docs/decisions.md "A read with campos is a partial record"). */
type Read = DenunciasRecord | DenunciasParcial

/**
 * The document declares each any-of group `o[N]` as JSON text (`content:
 * application/json`); the generated client serializes objects only in
 * brackets one level deep, so a client passes its own serializer, as the
 * generator's documentation says: objects as JSON, lists repeated.
 */
function querySerializer (query: Record<string, unknown>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue
    if (Array.isArray(value)) for (const v of value) search.append(name, String(v))
    else search.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value))
  }
  return search.toString()
}

export async function example (token: string): Promise<Read[]> {
  const client = createClient({ baseUrl: 'http://127.0.0.1:3000', auth: token, querySerializer })

  // A repeated equality filter is an array (?estado=a&estado=b); [in] a comma-separated list.
  const list = await listDenuncias({
    client,
    query: {
      estado: ['pendiente', 'investigacion'],
      'prioridad[in]': 'alta,urgente',
      'fecha_hechos[gte]': '2026-01-01 00:00:00',
      'lugar_hechos[contiene]': 'plaza',
      sort: '-fecha_hechos,_id',
      limit: 20,
      offset: 40,
    },
  })
  if (list.error !== undefined) {
    const failure: ApiError = list.error
    throw new Error(`${failure.codigo}: ${failure.error}`)
  }
  const records = list.data.data.records
  const first = records[0]
  if (first === undefined) return records

  // An update against the version read: the record's ETag goes back in If-Match.
  const etag = list.response.headers.get('etag') ?? `"${first._version}"`
  const updated = await updateDenuncias({
    client,
    path: { id: first._id },
    headers: { 'If-Match': etag },
    body: { estado: 'archivada' },
  })
  if (updated.error !== undefined && updated.error.codigo === 'CONFLICTO_VERSION') return records
  const version: number | undefined = updated.data?.data._version
  void version

  // @ts-expect-error an enum filter takes only the enum values
  await listDenuncias({ client, query: { estado: ['cerrada'] } })

  // Any-of groups (o[1]={"estado":"pendiente","prioridad":{"in":["alta","urgente"]}}), only some fields, the related record.
  const chosen = await listDenuncias({
    client,
    query: {
      'o[1]': { estado: 'pendiente', prioridad: { in: ['alta', 'urgente'] } },
      'o[2]': { agente_asignado: { vacio: false } },
      campos: 'estado,agente_asignado,agente_asignado.nombre,_version',
      expandir: 'agente_asignado',
    },
  })
  const agent = chosen.data?.data.records[0]?.agente_asignado
  // A ref is its id, or the related record with its _id when expanded.
  const agentId: string | undefined = typeof agent === 'object' && agent !== null ? agent._id : agent ?? undefined
  void agentId

  // A GET by id with campos: a partial record; without _version, no ETag.
  const one = await getDenuncias({ client, path: { id: first._id }, query: { campos: 'estado,prioridad' } })
  const read: Read | undefined = one.data?.data
  const estado: DenunciasRecord['estado'] | undefined = read?.estado
  const sent: string | null = one.response.headers.get('etag')
  void estado
  void sent

  // @ts-expect-error an any-of group takes the filter's type: an enum filter only its enum values
  await listDenuncias({ client, query: { 'o[1]': { estado: ['cerrada'] } } })

  // @ts-expect-error a misspelt filter (estado → estados)
  await listDenuncias({ client, query: { estados: ['pendiente'] } })

  // @ts-expect-error an update names at least the fields it changes, with their types
  await updateDenuncias({ client, path: { id: first._id }, body: { prioridad: 3 } })

  return records
}
