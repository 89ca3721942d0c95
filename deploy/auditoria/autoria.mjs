/**
 * The auditor's check that every history entry's author and time (`usuario`,
 * `fecha`) are those of its version's stored row (docs/operator-guide.md
 * "History and verification"), for cadena-global.mjs. Each version's row is
 * stored once: in its own entry's `datos` (entries written before the history
 * kept each version once), else in the next entry's `anterior`, else, for the
 * newest version, in the live row. A version whose row is in none of them
 * (the next entry deleted, the live row moved past it) is reported too.
 * Both queries return only what is wrong: the history can be large.
 * Shares no code with the service.
 */

const mismatch = (m, id, version) => `${m} ${id} v${version}: the author or time of the history row are not those of its version`

/** The entries whose version's row is in the history (theirs or the next one's) and says another author or time. */
export async function authorsInHistory (q, problem) {
  const rows = await q(`select h.modulo, h.registro, h.version
      from sys_historial h
      left join sys_historial n on n.modulo = h.modulo and n.registro = h.registro and n.version = h.version + 1
      cross join lateral (select coalesce(h.datos, n.anterior) as fila) r
     where r.fila is not null
       and (h.usuario is distinct from r.fila->>'_modified_by' or h.fecha is distinct from (r.fila->>'_modified')::timestamptz)
     order by h.modulo, h.registro, h.version`)
  for (const r of rows) problem(mismatch(r.modulo, r.registro, r.version))
}

/**
 * Module `m`'s entries whose version's row is not in the history (the
 * newest of each record): the live row must be that version, with the
 * entry's author and time. `table`: the module's table, known to exist.
 */
export async function authorsInLive (q, m, table, problem) {
  const rows = await q(`select h.registro, h.version, t."_id" is null as ninguna
      from sys_historial h
      left join sys_historial n on n.modulo = h.modulo and n.registro = h.registro and n.version = h.version + 1
      left join "${table.replace(/"/g, '""')}" t on t."_id" = h.registro and t."_version" = h.version
     where h.modulo = $1 and h.datos is null and n.anterior is null
       and (t."_id" is null or h.usuario is distinct from t."_modified_by" or h.fecha is distinct from t."_modified")
     order by h.registro, h.version`, [m])
  for (const r of rows) {
    problem(r.ninguna
      ? `${m} ${r.registro} v${r.version}: the stored row of this version is nowhere (not in its history entry, not in the next one's \`anterior\`, not the live row): history or record deleted or rolled back behind the service's back`
      : mismatch(m, r.registro, r.version))
  }
}
