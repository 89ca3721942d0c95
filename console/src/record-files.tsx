/**
 * A record's evidence files (docs/user-guide.md "Evidence files"), one section per file field: each
 * file with its type, size and upload; `Descargar` (saved, never
 * rendered); `Vista previa` of a raster image or a PDF whose type, name and
 * first bytes agree (fetched with the token into a `blob:` URL: the CSP's
 * img-src/frame-src allow `blob:` for this, docs/architecture.md "The
 * console"); never of an SVG, HTML or other file a browser would run
 * (console/src/file-safety.ts); `Custodia` (upload, downloads, removal). Upload by a file
 * picker or by dropping files on the field's zone, with progress, for
 * those who may `editar`; each upload is a new version of the record.
 * `Quitar` (those who may `editar`, after a confirming dialog) is a PUT of
 * the field with the files to keep, at the version shown; the bytes stay
 * as evidence (docs/user-guide.md "Evidence files").
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, download, fetchFile, request, upload } from './api.js'
import { previewBlob, previewType } from './file-safety.js'
import { fieldLabel, inSentence, type FieldInfo, type ModuleInfo } from './modules.js'
import { Person } from './people.js'
import { dateTimeText, numberText } from './spanish.js'

type Row = Record<string, unknown>
interface StoredFile { id: string, nombre: string, tipo: string, bytes: number, sha256: string, subido: string, subido_por: string }
interface CustodyEvent { accion: string, usuario: string, fecha: string, version?: number, rango?: string }

const ACTIONS: Record<string, string> = { subida: 'Subida', descarga: 'Descarga', retirada: 'Retirada' }

function size (bytes: number): string {
  if (bytes < 1024) return `${numberText(bytes)} B`
  if (bytes < 1024 * 1024) return `${numberText(Math.round(bytes / 102.4) / 10)} KB`
  return `${numberText(Math.round(bytes / 1024 / 102.4) / 10)} MB`
}

/** `onChange`: the record as written, or undefined to reload it. */
type Changed = (record: Row | undefined) => void

export function RecordFiles ({ mod, record, onChange }: { mod: ModuleInfo, record: Row, onChange: Changed }) {
  const fields = mod.campos.filter((f) => f.tipo === 'file')
  if (fields.length === 0) return null
  return (
    <section aria-labelledby="archivos">
      <h2 id="archivos">Archivos</h2>
      {fields.map((f) => <FileField key={f.nombre} mod={mod} field={f} record={record} onChange={onChange} />)}
    </section>
  )
}

function FileField ({ mod, field, record, onChange }: { mod: ModuleInfo, field: FieldInfo, record: Row, onChange: Changed }) {
  const [progress, setProgress] = useState<{ name: string, fraction: number }>()
  const [message, setMessage] = useState<{ ok: boolean, text: string }>()
  const [over, setOver] = useState(false)
  const base = `/${mod.ruta}/${encodeURIComponent(String(record._id))}/archivos/${encodeURIComponent(field.nombre)}`
  const files = Array.isArray(record[field.nombre]) ? record[field.nombre] as Array<StoredFile | string> : []
  const may = mod.acciones.editar !== undefined && record._deleted == null
  const label = fieldLabel(field)
  const inputId = `subir-${field.nombre}`

  const remove = async (file: StoredFile): Promise<void> => {
    setMessage(undefined)
    const keep = files.filter((f) => typeof f === 'string' || f.id !== file.id)
    try {
      onChange((await request<{ data: Row }>('PUT', `/${mod.ruta}/${encodeURIComponent(String(record._id))}`, { [field.nombre]: keep, _version: record._version })).data)
      setMessage({ ok: true, text: `Quitado: ${file.nombre} (sus bytes se conservan como prueba)` })
    } catch (err) {
      const conflict = err instanceof ApiError && err.status === 409
      if (conflict) onChange(undefined)
      setMessage({ ok: false, text: conflict ? 'El registro había cambiado: se muestra su versión actual; repita la acción si sigue siendo necesaria' : err instanceof ApiError ? err.message : 'Error inesperado' })
    }
  }

  const send = async (list: FileList | null): Promise<void> => {
    for (const file of [...(list ?? [])]) {
      setProgress({ name: file.name, fraction: 0 })
      setMessage(undefined)
      try {
        const res = await upload<{ data: { archivo: StoredFile, registro: Row } }>(`${base}?nombre=${encodeURIComponent(file.name)}`, file, (fraction) => setProgress({ name: file.name, fraction }))
        onChange(res.data.registro)
        setMessage({ ok: true, text: `Subido: ${res.data.archivo.nombre}` })
      } catch (err) {
        const details = err instanceof ApiError ? (err.detalles ?? []).map((d) => d.mensaje) : []
        setMessage({ ok: false, text: `${file.name}: ${[err instanceof ApiError ? err.message : 'Error inesperado', ...details].join('. ')}` })
        break
      } finally {
        setProgress(undefined)
      }
    }
  }

  return (
    <section class="file-field" aria-labelledby={`archivos-${field.nombre}`}>
      <h3 id={`archivos-${field.nombre}`}>{label}{field.cifrado && ' (cifrados)'}</h3>
      {files.length === 0 ? <p>Sin archivos.</p> : (
        <ul class="files">
          {files.map((f) => typeof f === 'string'
            ? <li key={f}>{f}</li>
            : <FileRow key={f.id} path={`${base}/${encodeURIComponent(f.id)}`} file={f} onRemove={may ? () => remove(f) : undefined} />)}
        </ul>
      )}
      {may && (
        <div class={over ? 'drop over' : 'drop'}
          onDragOver={(e) => { e.preventDefault(); setOver(true) }}
          onDragLeave={() => setOver(false)}
          onDrop={(e) => { e.preventDefault(); setOver(false); void send(e.dataTransfer?.files ?? null) }}>
          <label for={inputId}>Añadir archivos a {inSentence(label)}</label>
          <input id={inputId} type="file" multiple disabled={progress !== undefined} onChange={(e) => { const input = e.currentTarget as HTMLInputElement; void send(input.files).finally(() => { input.value = '' }) }} />
          <span class="hint">o arrástrelos aquí</span>
          {progress !== undefined && <progress max={1} value={progress.fraction} aria-label={`Subiendo ${progress.name}`} />}
        </div>
      )}
      {message !== undefined && <p class={message.ok ? 'ok' : 'error'} role={message.ok ? 'status' : 'alert'}>{message.text}</p>}
    </section>
  )
}

function FileRow ({ path, file, onRemove }: { path: string, file: StoredFile, onRemove?: () => Promise<void> }) {
  const [preview, setPreview] = useState<string>()
  const dialog = useRef<HTMLDialogElement>(null)
  const dialogId = `quitar-${file.id}`
  const [custody, setCustody] = useState<CustodyEvent[]>()
  const [error, setError] = useState<string>()
  const shows = previewType(file.nombre, file.tipo)
  useEffect(() => () => { if (preview !== undefined) URL.revokeObjectURL(preview) }, [preview])

  const attempt = async (action: () => Promise<void>): Promise<void> => {
    setError(undefined)
    try { await action() } catch (err) { setError(err instanceof ApiError ? err.message : 'Error inesperado') }
  }
  const showPreview = (): Promise<void> => attempt(async () => {
    const blob = await previewBlob(await (await fetchFile(path)).blob(), shows!)
    if (blob === undefined) throw new ApiError(0, `Sin vista previa: el contenido de ${file.nombre} no es ${file.tipo}`)
    setPreview(URL.createObjectURL(blob))
  })
  const showCustody = (): Promise<void> => attempt(async () => setCustody((await request<{ data: { eventos: CustodyEvent[] } }>('GET', `${path}/custodia`)).data.eventos))

  return (
    <li>
      <p><strong>{file.nombre}</strong> ({file.tipo}, {size(file.bytes)}), subido el {dateTimeText(file.subido)} por <Person id={file.subido_por} /></p>
      <p class="file-buttons">
        <button type="button" class="secondary" aria-label={`Descargar ${file.nombre}`} onClick={() => { void attempt(async () => { await download(path) }) }}>Descargar</button>
        {shows !== undefined && (preview === undefined
          ? <button type="button" class="secondary" aria-label={`Vista previa de ${file.nombre}`} onClick={() => { void showPreview() }}>Vista previa</button>
          : <button type="button" class="secondary" aria-label={`Cerrar vista previa de ${file.nombre}`} onClick={() => setPreview(undefined)}>Cerrar vista previa</button>)}
        <button type="button" class="secondary" aria-label={`Custodia de ${file.nombre}`} aria-expanded={custody !== undefined ? 'true' : 'false'} onClick={() => { if (custody === undefined) void showCustody(); else setCustody(undefined) }}>Custodia</button>
        {onRemove !== undefined && <button type="button" class="danger" aria-label={`Quitar ${file.nombre}`} onClick={() => dialog.current?.showModal()}>Quitar</button>}
      </p>
      {onRemove !== undefined && (
        <dialog ref={dialog} aria-labelledby={`${dialogId}-titulo`} aria-describedby={`${dialogId}-texto`}>
          <h2 id={`${dialogId}-titulo`}>Quitar {file.nombre}</h2>
          <p id={`${dialogId}-texto`}>El archivo dejará de figurar en el registro (una nueva versión). Sus bytes se conservan como prueba: sigue en el historial y en su cadena de custodia, y quien pueda eliminar en el módulo puede descargarlo.</p>
          <p class="dialog-buttons">
            <button type="button" class="danger" onClick={() => { dialog.current?.close(); void onRemove() }}>Quitar</button>
            <button type="button" class="secondary" autofocus onClick={() => dialog.current?.close()}>Cancelar</button>
          </p>
        </dialog>
      )}
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {preview !== undefined && (shows === 'application/pdf'
        ? <iframe class="preview" src={preview} title={`Vista previa de ${file.nombre}`} />
        : <img class="preview" src={preview} alt={`Vista previa de ${file.nombre}`} />)}
      {custody !== undefined && (
        <table class="custody">
          <caption>Cadena de custodia de {file.nombre}</caption>
          <thead><tr><th scope="col">Acción</th><th scope="col">Fecha</th><th scope="col">Usuario</th><th scope="col">Versión / rango</th></tr></thead>
          <tbody>
            {custody.map((e, i) => <tr key={i}><td>{ACTIONS[e.accion] ?? e.accion}</td><td>{dateTimeText(e.fecha)}</td><td><Person id={e.usuario} /></td><td>{e.version ?? e.rango ?? '—'}</td></tr>)}
          </tbody>
        </table>
      )}
    </li>
  )
}
