/**
 * Export (docs/user-guide.md "Export (exportar)") from a list with its current filters, search and order:
 * every matching record as CSV for a spreadsheet set to Spanish
 * (`separador=;`), downloaded with the token in the header, never in the
 * address. Shown to those who may `exportar` the module.
 */
import { useState } from 'preact/hooks'
import { ApiError, download } from './api.js'
import type { ModuleInfo } from './modules.js'

export function ExportButton ({ mod, selection }: { mod: ModuleInfo, selection: Array<[string, string]> }) {
  const [message, setMessage] = useState<{ ok: boolean, text: string }>()
  const [busy, setBusy] = useState(false)

  const run = async (): Promise<void> => {
    setBusy(true)
    setMessage(undefined)
    const query = new URLSearchParams([['formato', 'csv'], ['separador', ';'], ...selection])
    try {
      setMessage({ ok: true, text: `Exportado: ${await download(`/${mod.ruta}/exportar?${query.toString()}`)}` })
    } catch (err) {
      setMessage({ ok: false, text: err instanceof ApiError ? err.message : 'Error inesperado' })
    } finally {
      setBusy(false)
    }
  }

  return (
    <p class="export">
      <button type="button" disabled={busy} onClick={() => { void run() }}>Exportar CSV</button>
      {message !== undefined && <span class={message.ok ? 'ok' : 'error'} role={message.ok ? 'status' : 'alert'}>{message.text}</span>}
    </p>
  )
}
