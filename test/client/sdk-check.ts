/**
 * A client program against the SDK @hey-api/openapi-ts generates from the
 * service's OpenAPI document (`npm run openapi:sdk`, into the git-ignored
 * test/client/generated/sdk), type-checked under `tsc --strict` with no
 * cast (test/client/tsconfig.sdk.json) and run against a listening service
 * through Stoplight Prism (test/contract/sdk.test.ts): a login, a create
 * with witnesses, a list with any-of groups, an update against the version
 * read (If-Match), an upload, the history, each answer typed by the
 * document; and lines that must not compile (`@ts-expect-error`), where the
 * document refuses what the service refuses.
 */
import { createClient } from './generated/sdk/client/index.js'
import { createDenuncias, getDenuncias, historyDenuncias, listDenuncias, login, updateDenuncias, uploadFileDenuncias } from './generated/sdk/sdk.gen.js'
import type { DenunciasExpandido, DenunciasParcial, DenunciasRecord, Error as ApiError } from './generated/sdk/types.gen.js'

/** A list or a GET by id answers the whole record, the expanded one or with campos a partial one (docs/decisions.md "A read with campos is a partial record"). */
type Read = DenunciasRecord | DenunciasExpandido | DenunciasParcial

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

export interface TourOptions {
  readonly baseUrl: string
  readonly username: string
  readonly password: string
  /** The fetch the client uses (the contract test's watches Prism's verdicts). */
  readonly fetch?: typeof fetch
}

export interface TourResult {
  readonly id: string
  readonly witnesses: readonly string[]
  readonly foundByGroups: boolean
  readonly version: number
  readonly file: { readonly nombre: string, readonly bytes: number, readonly sha256: string }
  readonly versions: readonly number[]
  readonly partial: Read
}

function failed (what: string, error: ApiError): never {
  throw new Error(`${what}: ${error.codigo} ${error.error}${error.detalles === undefined ? '' : ` ${JSON.stringify(error.detalles)}`}`)
}

export async function sdkTour (options: TourOptions): Promise<TourResult> {
  const common = { baseUrl: options.baseUrl, querySerializer, ...(options.fetch !== undefined && { fetch: options.fetch }) }
  const session = await login({ client: createClient(common), body: { username: options.username, password: options.password } })
  if (session.error !== undefined) failed('login', session.error)
  const client = createClient({ ...common, auth: session.data.data.token })

  // A create with witnesses: a structured array's items are objects of its declared sub-fields.
  const created = await createDenuncias({
    client,
    body: {
      denunciante_nombre: 'Ana García',
      tipo: 'robo',
      fecha_hechos: '2026-05-01 10:00:00',
      lugar_hechos: 'Plaza de la Constitución',
      descripcion: 'Robo de una bicicleta atada a una farola',
      prioridad: 'alta',
      testigos: [{ nombre: 'Luis Pérez' }, { nombre: 'Marta Ruiz' }],
    },
  })
  if (created.error !== undefined) failed('create', created.error)
  const record: DenunciasRecord = created.data.data
  const witnesses = (record.testigos ?? []).map((t) => typeof t === 'object' && t !== null && typeof t.nombre === 'string' ? t.nombre : String(t))

  // Any-of groups (o[1]={"estado":"pendiente","prioridad":{"in":["alta","urgente"]}}) beside a plain filter.
  const list = await listDenuncias({
    client,
    query: {
      'lugar_hechos[contiene]': 'Constitución',
      'o[1]': { estado: 'pendiente', prioridad: { in: ['alta', 'urgente'] } },
      'o[2]': { testigos: { vacio: false } },
      sort: '-_created',
      limit: 20,
    },
  })
  if (list.error !== undefined) failed('list', list.error)
  const foundByGroups = list.data.data.records.some((r) => r._id === record._id)

  // An update against the version read: the record's ETag goes back in If-Match.
  const read = await getDenuncias({ client, path: { id: record._id } })
  if (read.error !== undefined) failed('get', read.error)
  const etag = read.response.headers.get('etag') ?? `"${record._version}"`
  const updated = await updateDenuncias({ client, path: { id: record._id }, headers: { 'If-Match': etag }, body: { prioridad: 'urgente' } })
  if (updated.error !== undefined) failed('update', updated.error)
  const version: number = updated.data.data._version

  // An upload: the bytes as they are, their media type named.
  const bytes = new TextEncoder().encode('Acta de la inspección ocular')
  const upload = await uploadFileDenuncias({
    client,
    path: { id: record._id, campo: 'adjuntos' },
    query: { nombre: 'acta inspección.txt' },
    headers: { 'Content-Type': 'text/plain' },
    body: new Blob([bytes], { type: 'text/plain' }),
  })
  if (upload.error !== undefined) failed('upload', upload.error)
  const file = upload.data.data.archivo

  // The history: every version, oldest first.
  const history = await historyDenuncias({ client, path: { id: record._id } })
  if (history.error !== undefined) failed('history', history.error)
  const versions = history.data.data.versiones.map((v) => v._version)

  // A GET by id with campos: a partial record; its refs an id or, expanded, the related record.
  const one = await getDenuncias({ client, path: { id: record._id }, query: { campos: 'estado,agente_asignado', expandir: 'agente_asignado' } })
  if (one.error !== undefined) failed('get with campos', one.error)
  const partial: Read = one.data.data
  const agent = partial.agente_asignado
  const agentId: string | null | undefined = typeof agent === 'object' && agent !== null ? agent._id : agent
  void agentId

  return {
    id: record._id,
    witnesses,
    foundByGroups,
    version,
    file: { nombre: file.nombre, bytes: file.bytes, sha256: file.sha256 },
    versions,
    partial,
  }
}

/** What the document refuses, as the service does: each line must not compile. */
export async function refused (options: TourOptions): Promise<void> {
  const client = createClient({ baseUrl: options.baseUrl, querySerializer })
  // @ts-expect-error an enum filter takes only the enum values
  await listDenuncias({ client, query: { estado: ['cerrada'] } })
  // @ts-expect-error an any-of group takes the filter's type: an enum filter only its enum values
  await listDenuncias({ client, query: { 'o[1]': { estado: ['cerrada'] } } })
  // @ts-expect-error a misspelt filter (estado → estados)
  await listDenuncias({ client, query: { estados: ['pendiente'] } })
  // @ts-expect-error an update names the fields it changes with their types
  await updateDenuncias({ client, path: { id: 'DEN-2026-00001' }, body: { prioridad: 3 } })
  // @ts-expect-error a witness is an object of its sub-fields, not a text
  await createDenuncias({ client, body: { denunciante_nombre: 'A', tipo: 'robo', fecha_hechos: '2026-05-01 10:00:00', lugar_hechos: 'B', descripcion: 'C', testigos: ['Luis'] } })
  // @ts-expect-error a plain record's reference is an id, not the related record
  const id: DenunciasRecord['agente_asignado'] = { _id: 'PER-2026-00001' }
  void id
}
