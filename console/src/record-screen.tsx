/**
 * A record (docs/user-guide.md "Console"): every field as the API shows it, withheld encrypted
 * ones marked `Restringido`, related records by name and linked, the
 * system fields, the verification result and the history as a timeline;
 * a notice when the record is blocked (`_bloqueado`);
 * its actions (record-actions.tsx) and files (record-files.tsx); its
 * accesses to those who may read the log (record-accesses.tsx).
 */
import { useEffect, useState } from 'preact/hooks'
import { ApiError, request } from './api.js'
import { fieldLabel, labelIn, singular, type FieldInfo, type ModuleInfo } from './modules.js'
import { href } from './route.js'
import { Person } from './people.js'
import { Restricted, Shown, SystemValue } from './shown.js'
import { dateTimeText } from './spanish.js'
import { RecordActions } from './record-actions.js'
import { RecordFiles } from './record-files.js'
import { RecordAccesses } from './record-accesses.js'
import { RefLink } from './ref-link.js'

type Row = Record<string, unknown>
interface Version { _version: number, accion: string, usuario: string, fecha: string, campos: string[] }
const SYSTEM = ['_created', '_created_by', '_modified', '_modified_by', '_version', '_deleted']
const ACTIONS: Record<string, string> = { crear: 'Creación', editar: 'Edición', eliminar: 'Eliminación', restaurar: 'Restauración', suprimir: 'Supresión de datos personales' }

export function RecordScreen ({ mod, id, modules, readsLog }: { mod: ModuleInfo, id: string, modules: ModuleInfo[], readsLog: boolean }) {
  const [record, setRecord] = useState<Row>()
  const [history, setHistory] = useState<Version[]>()
  const [valid, setValid] = useState<{ valido: boolean, version_rota?: number }>()
  const [error, setError] = useState<string>()
  const [done, setDone] = useState<string>()
  const base = `/${mod.ruta}/${encodeURIComponent(id)}`

  /** The history and verification again after every write; the record too unless the write answered it. */
  const load = (fresh?: Row): void => {
    const fail = (err: unknown): void => setError(err instanceof ApiError ? err.message : 'Error inesperado')
    if (fresh === undefined) request<{ data: Row }>('GET', base).then((res) => setRecord(res.data), fail)
    else setRecord(fresh)
    request<{ data: { versiones: Version[] } }>('GET', `${base}/historial`).then((res) => setHistory(res.data.versiones), () => undefined)
    request<{ data: { valido: boolean, version_rota?: number } }>('GET', `${base}/verificar`).then((res) => setValid(res.data), () => undefined)
  }
  useEffect(() => load(), [base])
  const written = (fresh: Row | undefined, message: string): void => {
    setDone(message)
    setError(undefined)
    // A deleted record answers 404 by id: the screen keeps what it showed, marked deleted.
    if (fresh?._deleted != null) { setRecord(fresh); setHistory(undefined); setValid(undefined); return }
    load(fresh)
  }

  const restricted = new Set(Array.isArray(record?._restringidos) ? record._restringidos as string[] : [])
  return (
    <>
      <p class="crumbs"><a href={href([mod.ruta])}>{mod.etiqueta}</a></p>
      <h1>{mod.etiqueta}: {id}</h1>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      <p class="ok" role="status">{done ?? ''}</p>
      {record !== undefined && (
        <>
          {record._deleted != null && <p class="notice">Registro eliminado</p>}
          {/* Only the officer and superadmins ever read a blocked record (docs/user-guide.md "Personal data"). */}
          {typeof record._bloqueado === 'string' && (
            <p class="notice blocked-notice">Registro bloqueado desde el {dateTimeText(record._bloqueado)}: solo lo leen el delegado de protección de datos y el superadministrador, y cada lectura queda registrada.</p>
          )}
          <RecordActions mod={mod} record={record} onDone={written} />
          <dl class="fields">
            {mod.campos.filter((f) => f.tipo !== 'file').map((f) => (
              <div key={f.nombre}>
                <dt>{fieldLabel(f)}</dt>
                <dd>{restricted.has(f.nombre) ? <Restricted /> : <Value field={f} value={record[f.nombre]} restricted={restricted} modules={modules} />}</dd>
              </div>
            ))}
          </dl>
          <h2>Datos del sistema</h2>
          <dl class="fields">
            {SYSTEM.filter((k) => k in record).map((k) => <div key={k}><dt>{labelIn(mod, k)}</dt><dd><SystemValue name={k} value={record[k]} /></dd></div>)}
          </dl>
          <RecordFiles mod={mod} record={record} onChange={(fresh) => written(fresh, '')} />
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
                <p><strong>Versión {v._version}</strong>: {ACTIONS[v.accion] ?? v.accion}, {dateTimeText(v.fecha)}, por <Person id={v.usuario} /></p>
                {v.campos.length > 0 && <p>Campos: {v.campos.map((c) => labelIn(mod, c)).join(', ')}</p>}
              </li>
            ))}
          </ol>
        </section>
      )}
      {readsLog && record !== undefined && <RecordAccesses mod={mod} id={id} version={record._version} />}
    </>
  )
}

/**
 * A field's value: a related record by name and linked (a module the
 * caller may not see: the person it names, else its id); a structured
 * array as one line per item, a sub-field withheld (`testigos.dni` in
 * `_restringidos`) marked `Restringido` in each.
 */
function Value ({ field, value, restricted, modules }: { field: FieldInfo, value: unknown, restricted: Set<string>, modules: ModuleInfo[] }) {
  const target = field.tipo === 'ref' ? modules.find((m) => m.ruta === field.ref) : undefined
  if (target !== undefined && typeof value === 'string') return <RefLink key={value} target={target} id={value} />
  if (field.elementos !== undefined && Array.isArray(value)) {
    if (value.length === 0) return <>—</>
    const item = singular(fieldLabel(field))
    return (
      <ul class="items">
        {value.map((row: Row, i) => (
          <li key={i}>
            <span class="item-name">{item} {i + 1}</span>
            {field.elementos!.map((sub) => (
              <span key={sub.nombre}> · {fieldLabel(sub)}: {restricted.has(`${field.nombre}.${sub.nombre}`) ? <Restricted /> : <Shown field={sub} value={row[sub.nombre]} />}</span>
            ))}
          </li>
        ))}
      </ul>
    )
  }
  return <Shown field={field} value={value} />
}
