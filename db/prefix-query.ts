/**
 * `search_query(text)`: the text-search query of `q` (docs/user-guide.md
 * "Search"), a SQL function the start-up sync defines beside `search_fold`.
 *
 * `q` is split into words by PostgreSQL's own parser on the folded text
 * (`to_tsvector('simple', …)`), the very parser that built the stored
 * document, so a hyphenated name, an e-mail address or a number is a word
 * on both sides. Each word must match (AND), as a prefix of a word of the
 * record (`cervan:*`, served by the document's GIN index), or, when it is a
 * whole word, through its Spanish stem (`robos` finds `robo`). A Spanish stop
 * word counts only when it is the last word, which may be the start of a
 * longer one still being typed (`la` → `ladrón`). A number also matches
 * after a hyphen (`2026` finds `DEN-2026-00001`, which the parser reads as
 * `-2026`). Every lexeme is quoted (quotes and backslashes doubled), so no
 * character of `q` is tsquery syntax: `& | ! ( ) : * < >` are separators.
 * No word at all gives null: nothing matches.
 *
 * Immutable: PostgreSQL computes it once while planning a query whose
 * argument is a bound value (searches are never prepared for a generic
 * plan: db/prepared-statements.ts), so the GIN index is looked up with a
 * constant query and the planner sees it.
 */

export const QUERY_FUNCTION = 'search_query'

/** A lexeme as a quoted tsquery operand: quotes and backslashes doubled (chr(92): whatever standard_conforming_strings says). */
const quoted = (expr: string): string => `'''' || replace(replace(${expr}, chr(92), chr(92) || chr(92)), '''', '''''') || ''''`

/** The function's body; `fold` is the schema-qualified `search_fold` (a body resolves names with its caller's search_path). */
export function queryFunctionBody (fold: string): string {
  return `
select string_agg('(' || t.term || ')', ' & ')::tsquery
from (
  select case
    when s.stems is null then case when w.last then w.prefix end
    when s.stems = w.word then w.prefix
    else w.prefix || ' | ' || s.stems
  end as term
  from (
    select lexeme, ${quoted('lexeme')} as word,
      ${quoted('lexeme')} || ':*' || case when lexeme ~ '^[0-9]' then ' | ' || ${quoted("'-' || lexeme")} || ':*' else '' end as prefix,
      positions[array_upper(positions, 1)] = max(positions[array_upper(positions, 1)]) over () as last
    from unnest(to_tsvector('simple'::regconfig, ${fold}($1)))
  ) w
  cross join lateral (
    select string_agg(${quoted('lexeme')}, ' & ') as stems from unnest(to_tsvector('spanish'::regconfig, w.lexeme))
  ) s
) t
`
}
