/**
 * A record (SPEC S19): every field as the API shows it, withheld encrypted
 * ones marked `Restringido`, references linked to their record, the system
 * fields, the verification result and the history as a timeline.
 */
import { useEffect, useState } from 'preact/hooks'
import { ApiError, request } from './api.js'
import { labelOf, show, type FieldInfo, type ModuleInfo } from './modules.js'
import { href } from './route.js'
import { Restricted } from './list-screen.js'

type Row = Record<string, unknown>
interface Version { _version: number, accion: string, usuario: string, fecha: string, campos: string[] }
const SYSTEM = ['_created', '_created_by', '_modified', '_modified_by', '_version', '_deleted']
const ACTIONS: Record<string, string> = { crear: 'Creación', editar: 'Edición', eliminar: 'Eliminación', restaurar: 'Restauración' }

export function RecordScreen ({ mod, id, modules }: { mod: ModuleInfo, id: string, modules: ModuleInfo[] }) {
  const [record, setRecord] = useState<Row>()
  const [history, setHistory] = useState<Version[]>()
  const [valid, setValid] = useState<{ valido: boolean, version_rota?: number }>()
  const [error, setError] = useState<string>()
  const base = `/${mod.ruta}/${encodeURIComponent(id)}`

  useEffect(() => {
    const fail = (err: unknown): void => setError(err instanceof ApiError ? err.message : 'Error inesperado')
    request<{ data: Row }>('GET', base).then((res) => setRecord(res.data), fail)
    request<{ data: { versiones: Version[] } }>('GET', `${base}/historial`).then((res) => setHistory(res.data.versiones), () => undefined)
    request<{ data: { valido: boolean, version_rota?: number } }>('GET', `${base}/verificar`).then((res) => setValid(res.data), () => undefined)
  }, [base])

  const restricted = new Set(Array.isArray(record?._restringidos) ? record._restringidos as string[] : [])
  return (
    <>
      <p class="crumbs"><a href={href([mod.ruta])}>{mod.etiqueta}</a></p>
      <h1>{mod.etiqueta}: {id}</h1>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {record !== undefined && (
        <>
          {record._deleted != null && <p class="notice">Registro eliminado</p>}
          <dl class="fields">
            {mod.campos.map((f) => (
              <div key={f.nombre}>
                <dt>{labelOf(f.nombre)}</dt>
                <dd>{restricted.has(f.nombre) ? <Restricted /> : <Value field={f} value={record[f.nombre]} modules={modules} />}</dd>
              </div>
            ))}
          </dl>
          <h2>Datos del sistema</h2>
          <dl class="fields">
            {SYSTEM.filter((k) => k in record).map((k) => <div key={k}><dt>{labelOf(k)}</dt><dd>{show(record[k])}</dd></div>)}
          </dl>
          {valid !== undefined && (
            <p class={valid.valido ? 'ok' : 'error'}>{valid.valido ? 'Integridad verificada: la cadena de versiones es correcta' : `Integridad rota en la versión ${valid.version_rota ?? '?'}`}</p>
          )}
        </>
      )}
      {history !== undefined && (
        <section aria-labelledby="historial">
          <h2 id="historial">Historial</h2>
          <ol class="timeline">
            {history.map((v) => (
              <li key={v._version}>
                <p><strong>Versión {v._version}</strong>: {ACTIONS[v.accion] ?? v.accion}, {v.fecha}, por {v.usuario}</p>
                {v.campos.length > 0 && <p>Campos: {v.campos.map(labelOf).join(', ')}</p>}
              </li>
            ))}
          </ol>
        </section>
      )}
    </>
  )
}

function Value ({ field, value, modules }: { field: FieldInfo, value: unknown, modules: ModuleInfo[] }) {
  if (field.tipo === 'ref' && typeof value === 'string' && modules.some((m) => m.ruta === field.ref)) {
    return <a href={href([field.ref!, value])}>{value}</a>
  }
  if (field.elementos !== undefined && Array.isArray(value)) {
    if (value.length === 0) return <>—</>
    return (
      <ul class="items">
        {value.map((item: Row, i) => (
          <li key={i}>
            {field.elementos!.map((sub) => {
              const hidden = Array.isArray(item._restringidos) && (item._restringidos as string[]).includes(sub.nombre)
              return <span key={sub.nombre}>{labelOf(sub.nombre)}: {hidden ? <Restricted /> : show(item[sub.nombre])}; </span>
            })}
          </li>
        ))}
      </ul>
    )
  }
  return <>{show(value)}</>
}
