/**
 * `Nuevo` and `Editar` (docs/user-guide.md "Console"): a form generated from the
 * module's fields, checked in the browser as the API checks them
 * (form-values.ts), the API's `detalles` beside each field. An edit sends
 * what changed with the record's `_version`; a 409 `Conflicto de versión`
 * offers to reload the record, keeping the user's changes in the form and
 * showing beside each what the record holds now.
 */
import { useEffect, useState } from 'preact/hooks'
import { ApiError, request } from './api.js'
import { FieldInput } from './field-input.js'
import { bodyOf, formFields, initialValues, problems as check, type Values } from './form-values.js'
import type { ModuleInfo } from './modules.js'
import { href } from './route.js'

export const NEW_PATH = '_nuevo'
export const EDIT_PATH = 'editar'
type Row = Record<string, unknown>

/** Encrypted values the caller may not see, and structured arrays with a sub-field withheld (`testigos.dni`): shown, never sent. */
function restrictedOf (record: Row | undefined): Set<string> {
  const named = Array.isArray(record?._restringidos) ? record._restringidos as string[] : []
  return new Set(named.map((n) => n.split('.')[0]!))
}

export function FormScreen ({ mod, id, modules }: { mod: ModuleInfo, id?: string, modules: ModuleInfo[] }) {
  const editing = id !== undefined
  const base = editing ? `/${mod.ruta}/${encodeURIComponent(id)}` : `/${mod.ruta}`
  const [record, setRecord] = useState<Row>()
  const [original, setOriginal] = useState<Values>()
  const [values, setValues] = useState<Values>(() => editing ? {} : initialValues(mod))
  const [shown, setShown] = useState(new Map<string, string>())
  const [error, setError] = useState<string>()
  const [conflict, setConflict] = useState(false)
  const [stored, setStored] = useState<Values>()
  const [busy, setBusy] = useState(false)
  const restricted = restrictedOf(record)

  const load = async (keep: boolean): Promise<void> => {
    const res = await request<{ data: Row }>('GET', base)
    const fresh = initialValues(mod, res.data)
    setRecord(res.data)
    setOriginal(fresh)
    if (!keep) { setValues(fresh); return }
    // The user's changes stay; what they left alone takes the record's values now, so saving overwrites nobody's other changes.
    const before = original ?? {}
    setValues((mine) => Object.fromEntries(Object.entries(fresh).map(([k, v]) => [k, JSON.stringify(mine[k]) !== JSON.stringify(before[k]) ? mine[k]! : v])))
    setStored(fresh)
  }
  useEffect(() => {
    if (editing) load(false).catch((err: unknown) => setError(err instanceof ApiError ? err.message : 'Error inesperado'))
  }, [base])

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    const found = check(mod, values, modules, restricted, editing)
    setShown(found)
    setError(undefined)
    if (found.size > 0) {
      setError(`Revise ${found.size === 1 ? 'el campo marcado' : `los ${found.size} campos marcados`}`)
      focusFirst(found)
      return
    }
    const body = bodyOf(mod, values, original, restricted)
    setBusy(true)
    try {
      const res = editing
        ? await request<{ data: Row }>('PUT', base, { ...body, _version: record?._version })
        : await request<{ data: Row }>('POST', base, body)
      location.hash = href([mod.ruta, String(res.data._id)])
    } catch (err) {
      if (!(err instanceof ApiError)) { setError('Error inesperado'); return }
      if (err.status === 409 && err.codigo === 'CONFLICTO_VERSION') { setConflict(true); return }
      const details = new Map((err.detalles ?? []).map((d) => [d.campo, d.mensaje]))
      setShown(details)
      setError(err.message)
      focusFirst(details)
    } finally {
      setBusy(false)
    }
  }

  const reload = async (): Promise<void> => {
    try {
      await load(true)
      setConflict(false)
      setError(undefined)
      // Once drawn: the first of the user's changes that the record now holds otherwise.
      requestAnimationFrame(() => document.getElementById('formulario')?.querySelector<HTMLElement>('[aria-describedby*="-guardado"]')?.focus())
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Error inesperado')
    }
  }

  const title = editing ? `Editar ${id}` : `Nuevo registro de ${mod.etiqueta}`
  if (mod.acciones[editing ? 'editar' : 'crear'] === undefined) {
    return <><h1>{title}</h1><p>Su rol no puede {editing ? 'editar' : 'crear'} registros de {mod.etiqueta}.</p></>
  }
  return (
    <>
      <p class="crumbs"><a href={href([mod.ruta])}>{mod.etiqueta}</a>{editing && <> › <a href={href([mod.ruta, id])}>{id}</a></>}</p>
      <h1>{title}</h1>
      {conflict && (
        <div class="notice conflict" role="alert">
          <p>Otra persona ha modificado este registro mientras lo editaba. Sus cambios siguen en el formulario y no se han guardado.</p>
          <button type="button" onClick={() => { void reload() }}>Recargar el registro</button>
        </div>
      )}
      {stored !== undefined && !conflict && <p class="notice" role="status">Registro recargado (versión {String(record?._version)}). Sus cambios se mantienen; junto a cada campo que difiere verá el valor guardado ahora. Pulse Guardar para aplicarlos.</p>}
      {(!editing || record !== undefined) && (
        <form id="formulario" class="record-form" noValidate onSubmit={(e) => { void submit(e) }} aria-label={title}>
          {formFields(mod, editing).map((f) => {
            const v = values[f.nombre]
            if (v === undefined) return null
            const now = stored?.[f.nombre]
            const differs = now !== undefined && JSON.stringify(now) !== JSON.stringify(v) && !Array.isArray(now)
            return (
              <FieldInput key={f.nombre} field={f} value={v} problems={shown} restricted={restricted.has(f.nombre)} editing={editing} modules={modules}
                stored={differs ? String(now) : undefined}
                onChange={(next) => setValues((old) => ({ ...old, [f.nombre]: next }))} />
            )
          })}
          {error !== undefined && <p class="error" role="alert">{error}</p>}
          <p class="actions">
            <button type="submit" disabled={busy}>Guardar</button>
            <a href={editing ? href([mod.ruta, id]) : href([mod.ruta])}>Cancelar</a>
          </p>
        </form>
      )}
      {editing && record === undefined && error !== undefined && <p class="error" role="alert">{error}</p>}
    </>
  )
}

/** The first field named by a problem gets the focus (its group's first input for an item). */
function focusFirst (found: Map<string, string>): void {
  const first = [...found.keys()][0]
  if (first === undefined) return
  const id = `campo-${first.replace(/\[(\d+)\]\./g, '-$1-')}`
  requestAnimationFrame(() => (document.getElementById(id) ?? document.querySelector<HTMLElement>(`[id^="${CSS.escape(id)}"]`))?.focus())
}
