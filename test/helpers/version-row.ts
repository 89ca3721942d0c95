/**
 * Where a version's stored row lives, for tests that read or tamper with it
 * in SQL (docs/decisions.md "Each version stored once"): its own history
 * entry's `datos` (entries written by older releases), else the next
 * entry's `anterior`, else the live row, which is the newest version.
 */
type Query = (text: string, params: unknown[]) => Promise<unknown[]>
type Rec = Record<string, any>
/** `query`'s rows, read as records. */
const rows = async (query: Query, text: string, params: unknown[]): Promise<Rec[]> => await query(text, params) as Rec[]

export type RowHome = { at: 'history', version: number, column: 'datos' | 'anterior' } | { at: 'live' }

/** The place of version `version`'s row of record `registro`. */
export async function rowHome (query: Query, registro: string, version: number): Promise<RowHome> {
  const entries = await rows(query, 'select version, datos is not null as own, anterior is not null as carries from sys_historial where registro = $1 and version in ($2, $3)', [registro, version, version + 1])
  if (entries.some((e) => Number(e.version) === version && e.own === true)) return { at: 'history', version, column: 'datos' }
  if (entries.some((e) => Number(e.version) === version + 1 && e.carries === true)) return { at: 'history', version: version + 1, column: 'anterior' }
  return { at: 'live' }
}

/** Version `version`'s stored row as JSON (the live row read with `to_jsonb`: instants as PostgreSQL writes them). */
export async function versionRow (query: Query, table: string, registro: string, version: number): Promise<Record<string, any>> {
  const home = await rowHome(query, registro, version)
  const [row] = home.at === 'live'
    ? await rows(query, `select to_jsonb(t) as r from "${table}" t where "_id" = $1 and "_version" = $2`, [registro, version])
    : await rows(query, `select ${home.column} as r from sys_historial where registro = $1 and version = $2`, [registro, home.version])
  if (row === undefined) throw new Error(`${registro}: version ${version} has no stored row`)
  return row.r
}

/**
 * Sets `key` of version `version`'s row to the text `value` where that row
 * lives (a history column, or the live row's column); the returned function
 * puts the row back as it was.
 */
export async function setInVersion (query: Query, table: string, registro: string, version: number, key: string, value: string): Promise<() => Promise<void>> {
  const home = await rowHome(query, registro, version)
  if (home.at === 'live') {
    const [orig] = await rows(query, `select "${key}" as x from "${table}" where "_id" = $1 and "_version" = $2`, [registro, version])
    if (orig === undefined) throw new Error(`${registro}: version ${version} has no stored row`)
    await rows(query, `update "${table}" set "${key}" = $2 where "_id" = $1`, [registro, value])
    return async () => { await rows(query, `update "${table}" set "${key}" = $2 where "_id" = $1`, [registro, orig.x]) }
  }
  const { column: c, version: entry } = home
  const [orig] = await rows(query, `select ${c}::text as x from sys_historial where registro = $1 and version = $2`, [registro, entry])
  await rows(query, `update sys_historial set ${c} = jsonb_set(${c}, $3::text[], to_jsonb($4::text)) where registro = $1 and version = $2`, [registro, entry, `{${key}}`, value])
  return async () => { await rows(query, `update sys_historial set ${c} = $3::jsonb where registro = $1 and version = $2`, [registro, entry, orig!.x]) }
}
