/**
 * Import from the console (docs/user-guide.md "Console", `Importar`;
 * the API: docs/user-guide.md "Import (importar)"), for those who may
 * `importar` the module: a CSV or NDJSON file is first checked without
 * writing anything (`simular=true`), its problems shown row by row; when
 * it has none it is imported, all rows or none, with the upload's progress
 * and an Idempotency-Key, so a retry after a lost answer never creates the
 * records twice (docs/user-guide.md "Retries and Idempotency-Key").
 */
import { useRef, useState } from 'preact/hooks'
import { ApiError, upload, type Detail } from './api.js'
import { ImportNotes, ImportProblems, type Problem } from './import-problems.js'
import type { ModuleInfo } from './modules.js'
import { fieldLabel } from './report-data.js'
import { href } from './route.js'

export const IMPORT_PATH = '_importar'

interface Report { filas: number, validas: number, errores: Problem[], errores_omitidos: number, avisos?: Problem[] }
interface Done { filas: number, creados: number, ids: string[], avisos?: Problem[] }
interface Failure { text: string, problems: Problem[], uncertain: boolean }

const ENCODINGS: Array<[string, string]> = [['utf-8', 'UTF-8 (la habitual)'], ['windows-1252', 'Windows-1252 (Excel en español, «CSV delimitado por comas»)'], ['iso-8859-1', 'ISO-8859-1 (Latin-1)']]

/** The Content-Type of a file by its name: what the API reads it as. */
function typeOf (file: File): string | undefined {
  if (/\.(ndjson|jsonl)$/i.test(file.name)) return 'application/x-ndjson'
  if (/\.(csv|txt)$/i.test(file.name)) return 'text/csv'
  return file.type === 'text/csv' || file.type === 'application/x-ndjson' ? file.type : undefined
}

/** A new Idempotency-Key (a random UUID); crypto.randomUUID exists only on HTTPS pages. */
function newKey (): string {
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** An import's 400 names each problem's row in `campo` (`fila 3: fecha_hechos`); a dry run's as `fila` and `campo`. */
function problemsOf (detalles: Detail[] | undefined): Problem[] {
  return (detalles ?? []).map((d) => {
    const m = /^fila (\d+)(?:: (.*))?$/.exec(d.campo)
    return m === null ? { fila: undefined, campo: d.campo, mensaje: d.mensaje } : { fila: Number(m[1]), campo: m[2] ?? '', mensaje: d.mensaje }
  })
}

/** Lost answers, a proxy's or the service's unavailability, a repeat still running: the import may have been written, or may be sent again with the same key. */
const UNCERTAIN = new Set([0, 409, 502, 503, 504])

export function ImportScreen ({ mod }: { mod: ModuleInfo }) {
  const [file, setFile] = useState<File>()
  const [encoding, setEncoding] = useState('utf-8')
  const [key, setKey] = useState<string>()
  const [busy, setBusy] = useState<'comprobando' | 'importando'>()
  const [progress, setProgress] = useState(0)
  const [report, setReport] = useState<Report>()
  const [done, setDone] = useState<Done>()
  const [failure, setFailure] = useState<Failure>()
  const picker = useRef<HTMLInputElement>(null)

  if (mod.acciones.importar === undefined) return <><h1>Importar: {mod.etiqueta}</h1><p>Su rol no puede importar registros de este módulo.</p></>

  const type = file === undefined ? undefined : typeOf(file)
  // A new file or encoding is a new request: a new key, and a new check before importing.
  const reset = (): void => { setKey(undefined); setReport(undefined); setDone(undefined); setFailure(undefined) }

  const send = async (simular: boolean): Promise<void> => {
    if (file === undefined || type === undefined) return
    const query = new URLSearchParams(simular ? { simular: 'true' } : {})
    if (encoding !== 'utf-8') query.set('codificacion', encoding)
    const idempotency = simular ? undefined : key ?? newKey()
    if (idempotency !== undefined) setKey(idempotency)
    setBusy(simular ? 'comprobando' : 'importando')
    setProgress(0)
    setFailure(undefined)
    try {
      const res = await upload<{ data: Report & Done }>(`/${mod.ruta}/importar${query.toString() === '' ? '' : `?${query.toString()}`}`, file, setProgress, { type, headers: idempotency === undefined ? {} : { 'Idempotency-Key': idempotency } })
      if (simular) setReport(res.data)
      else setDone(res.data)
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 0
      const text = err instanceof ApiError ? err.message : 'Error inesperado'
      setFailure({ text, problems: err instanceof ApiError ? problemsOf(err.detalles) : [], uncertain: !simular && UNCERTAIN.has(status) })
    } finally {
      setBusy(undefined)
    }
  }

  // After a lost answer only `Reintentar` sends the import again (the same request, the same key).
  const ready = report !== undefined && report.errores.length === 0 && report.errores_omitidos === 0 && done === undefined && failure?.uncertain !== true
  return (
    <>
      <h1>Importar: {mod.etiqueta}</h1>
      <p><a href={href([mod.ruta])}>Volver a la lista</a></p>
      <p>
        Un fichero CSV (la primera fila, los nombres de los campos; separador «,» o «;») o NDJSON (un objeto JSON por línea).
        Primero se comprueba sin guardar nada; después se importan todas sus filas o ninguna.
      </p>
      <Columns mod={mod} />
      <div class="stacked">
        <div>
          <label for="fichero">Fichero CSV o NDJSON</label>
          {/* The browser's own picker button speaks the browser's language: a button of ours opens it. */}
          <input ref={picker} id="fichero" class="visually-hidden" tabIndex={-1} type="file" accept=".csv,.ndjson,.jsonl,.txt,text/csv,application/x-ndjson" disabled={busy !== undefined}
            onChange={(e) => { reset(); setFile((e.currentTarget as HTMLInputElement).files?.[0]) }} />
          <p class="file-pick">
            <button type="button" class="secondary" disabled={busy !== undefined} aria-describedby="fichero-elegido" onClick={() => picker.current?.click()}>Elegir fichero…</button>
            <span id="fichero-elegido">{file?.name ?? 'Ningún fichero elegido'}</span>
          </p>
        </div>
        <div>
          <label for="codificacion">Codificación del fichero</label>
          <select id="codificacion" disabled={busy !== undefined} onChange={(e) => { reset(); setEncoding((e.currentTarget as HTMLSelectElement).value) }}>
            {ENCODINGS.map(([v, text]) => <option key={v} value={v} selected={v === encoding}>{text}</option>)}
          </select>
        </div>
      </div>
      {file !== undefined && type === undefined && <p class="error" role="alert">«{file.name}» no es un fichero .csv ni .ndjson.</p>}
      <p class="actions">
        <button type="button" disabled={type === undefined || busy !== undefined} onClick={() => { void send(true) }}>Comprobar sin importar</button>
        {ready && <button type="button" disabled={busy !== undefined} onClick={() => { void send(false) }}>Importar {report.filas === 1 ? '1 registro' : `${report.filas} registros`}</button>}
      </p>
      {busy !== undefined && <Progress busy={busy} fraction={progress} />}
      {failure !== undefined && (
        <div role="alert">
          <p class="error">{failure.uncertain ? `No se sabe si la importación se guardó (${failure.text}). Pulse «Reintentar»: con la misma petición no se crea nada dos veces.` : failure.text}</p>
          {failure.uncertain && <p><button type="button" disabled={busy !== undefined} onClick={() => { void send(false) }}>Reintentar</button></p>}
        </div>
      )}
      {failure !== undefined && failure.problems.length > 0 && <ImportProblems mod={mod} problems={failure.problems} omitted={0} />}
      {report !== undefined && done === undefined && (
        <section aria-labelledby="comprobacion">
          <h2 id="comprobacion">Comprobación</h2>
          <p role="status">
            {report.filas === 1 ? '1 fila leída' : `${report.filas} filas leídas`}: {report.validas === 1 ? '1 válida' : `${report.validas} válidas`}
            {report.filas > report.validas && `, ${report.filas - report.validas} con problemas`}.
            {ready ? ' Se puede importar.' : ' Corrija el fichero y vuelva a comprobarlo.'}
          </p>
          {report.errores.length > 0 && <ImportProblems mod={mod} problems={report.errores} omitted={report.errores_omitidos} />}
          <ImportNotes mod={mod} notes={report.avisos} />
        </section>
      )}
      {done !== undefined && <Result mod={mod} done={done} />}
    </>
  )
}

function Progress ({ busy, fraction }: { busy: 'comprobando' | 'importando', fraction: number }) {
  const sent = fraction >= 1
  const text = sent ? (busy === 'comprobando' ? 'Comprobando las filas en el servicio…' : 'Guardando los registros en el servicio…') : `Enviando el fichero: ${Math.round(fraction * 100)} %`
  return (
    <p class="progress" aria-live="polite">
      <label for="progreso">{text}</label>
      {sent ? <progress id="progreso" /> : <progress id="progreso" max={1} value={fraction} />}
    </p>
  )
}

function Result ({ mod, done }: { mod: ModuleInfo, done: Done }) {
  const first = done.ids[0]
  const last = done.ids.at(-1)
  const link = (id: string) => <a href={href([mod.ruta, id])}>{id}</a>
  return (
    <section aria-labelledby="resultado">
      <h2 id="resultado">Importación terminada</h2>
      <p class="ok" role="status">{done.creados === 1 ? '1 registro creado' : `${done.creados} registros creados`}.</p>
      <ImportNotes mod={mod} notes={done.avisos} />
      {first !== undefined && last !== undefined && (
        <p>{first === last ? <>Referencia: {link(first)}</> : <>Del {link(first)} al {link(last)}.</>}</p>
      )}
      <p><a href={href([mod.ruta])}>Ver la lista de {mod.etiqueta}</a></p>
    </section>
  )
}

/** The columns a file may carry: each field's name, as the header writes it, with its label. */
function Columns ({ mod }: { mod: ModuleInfo }) {
  const fields = mod.campos.filter((f) => f.tipo !== 'file')
  return (
    <details>
      <summary>Columnas que admite</summary>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Columnas de {mod.etiqueta}</caption>
          <thead><tr><th scope="col">Columna</th><th scope="col">Campo</th><th scope="col">Obligatoria</th></tr></thead>
          <tbody>{fields.map((f) => <tr key={f.nombre}><th scope="row"><code>{f.nombre}</code></th><td>{fieldLabel(f)}</td><td>{f.obligatorio ? 'Sí' : 'No'}</td></tr>)}</tbody>
        </table>
      </div>
    </details>
  )
}
