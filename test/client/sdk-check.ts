/**
 * A client program against the SDK @hey-api/openapi-ts generates from the
 * service's OpenAPI document (`npm run openapi:sdk`, into the git-ignored
 * test/client/generated/sdk). It is only type-checked, under `tsc --strict`
 * (test/client/tsconfig.sdk.json): what it shows is that the document lets
 * a client list a module with typed filters and update a record against
 * the version it read (If-Match), and refuses what the service refuses.
 * Never run.
 */
import { createClient } from './generated/sdk/client/index.js'
import { listDenuncias, updateDenuncias } from './generated/sdk/sdk.gen.js'
import type { DenunciasRecord, Error as ApiError } from './generated/sdk/types.gen.js'

export async function example (token: string): Promise<DenunciasRecord[]> {
  const client = createClient({ baseUrl: 'http://127.0.0.1:3000', auth: token })

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

  // @ts-expect-error a misspelt filter (estado → estados)
  await listDenuncias({ client, query: { estados: ['pendiente'] } })

  // @ts-expect-error an update names at least the fields it changes, with their types
  await updateDenuncias({ client, path: { id: first._id }, body: { prioridad: 3 } })

  return records
}
