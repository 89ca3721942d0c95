/**
 * `Anterior` / `Siguiente` over a limit/offset list the screen keeps in
 * its own state (docs/user-guide.md "Console"). `label` names the
 * navigation: two on one screen need different names.
 */
import { numberText } from './spanish.js'

export interface PageOf { total: number, limit: number, offset: number }

export function Pager ({ label, page, onOffset }: { label: string, page: PageOf, onOffset: (offset: number) => void }) {
  const pages = Math.max(1, Math.ceil(page.total / page.limit))
  const current = Math.floor(page.offset / page.limit) + 1
  if (pages === 1) return null
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={current <= 1} onClick={() => onOffset(Math.max(0, page.offset - page.limit))}>Anterior</button>
      <span>Página {numberText(current)} de {numberText(pages)}</span>
      <button type="button" disabled={current >= pages} onClick={() => onOffset(page.offset + page.limit)}>Siguiente</button>
    </nav>
  )
}
