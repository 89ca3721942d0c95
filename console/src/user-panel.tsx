/**
 * One user in Administrar usuarios (docs/user-guide.md "Console"): its
 * name, e-mail and staff record (`personal_id`, picked by name with the
 * reference picker) saved together — never its password, which is set
 * only when the user is created or by `Restablecer contraseña`, a form of
 * its own —; its role; activation; closing its sessions; its login
 * lock-out (shown, and lifted by `Desbloquear`). Each a request of its
 * own, its answer said beside it.
 */
import { useEffect, useState } from 'preact/hooks'
import { request } from './api.js'
import { Input, OutcomeLine, formValues, useOutcome, type Outcome } from './admin-form.js'
import { fieldOf, valueLabel, type ModuleInfo } from './modules.js'
import { RefPicker } from './ref-picker.js'
import { dateTimeText } from './spanish.js'

export interface UserRow { _id: string, username: string, nombre: string, rol: string, activo: boolean | null, email?: string | null, personal_id?: string | null }

interface StaffProps { id: string, mod: ModuleInfo, modules: ModuleInfo[], value: string, outcome: Outcome | undefined, onChange: (value: string) => void }

/**
 * The staff record a user is linked to: the picker over the staff module
 * (type part of a name), or the reference typed when the caller may not
 * see that module; sent as `personal_id` (a hidden input of the form).
 */
export function StaffInput ({ id, mod, modules, value, outcome, onChange }: StaffProps) {
  const target = modules.find((m) => m.ruta === fieldOf(mod, 'personal_id')?.ref)
  const message = outcome?.detalles?.find((d) => d.campo === 'personal_id')?.mensaje
  const hint = `${id}-ayuda`
  const described = [hint, ...(message === undefined ? [] : [`${id}-error`])].join(' ')
  return (
    <div>
      <label for={id}>Ficha de personal</label>
      {target === undefined
        ? <input id={id} type="text" autocomplete="off" value={value} aria-describedby={described} aria-invalid={message === undefined ? undefined : 'true'} onInput={(e) => onChange((e.currentTarget as HTMLInputElement).value.trim())} />
        : <RefPicker id={id} target={target} value={value} required={false} invalid={message !== undefined} describedBy={described} onChange={onChange} />}
      <input type="hidden" name="personal_id" value={value} />
      <span id={hint} class="hint">{target === undefined ? 'Su referencia (PER-AAAA-NNNNN)' : 'Escriba parte del nombre y elija'}; vacío: sin ficha</span>
      {message !== undefined && <span id={`${id}-error`} class="error">{message}</span>}
    </div>
  )
}

interface Lock { bloqueado: boolean, bloqueado_hasta: string | null }

/**
 * The login lock-out as `GET /usuarios/{id}` answers it (docs/user-guide.md
 * "Rate limits"): the username locked for every client without a
 * remembered device, until when.
 */
function LockLine ({ lock }: { lock: Lock | undefined }) {
  if (lock === undefined) return null
  return (
    <p class={lock.bloqueado ? 'error' : undefined} id="gu-bloqueo">
      {lock.bloqueado
        ? `Bloqueado hasta ${lock.bloqueado_hasta === null ? 'nuevo aviso' : dateTimeText(lock.bloqueado_hasta)} por intentos fallidos de inicio de sesión`
        : 'Sin bloqueo de inicio de sesión'}
    </p>
  )
}

/** What the user's data form changed: only those fields are sent (an emptied e-mail or staff record as null). */
function changes (user: UserRow, form: HTMLFormElement, fields: string[]): Record<string, unknown> {
  const data = new FormData(form)
  const body: Record<string, unknown> = {}
  for (const name of fields) {
    const v = String(data.get(name) ?? '').trim()
    const was = (user as unknown as Record<string, unknown>)[name] ?? ''
    if (v !== was) body[name] = v === '' && name !== 'nombre' ? null : v
  }
  return body
}

export function UserPanel ({ mod, modules, user, onChanged }: { mod: ModuleInfo, modules: ModuleInfo[], user: UserRow, onChanged: () => void }) {
  const [outcome, run] = useOutcome()
  const [lock, setLock] = useState<Lock>()
  const [staff, setStaff] = useState(user.personal_id ?? '')
  const rol = fieldOf(mod, 'rol')
  const editable = ['nombre', 'email', 'personal_id'].filter((f) => fieldOf(mod, f) !== undefined)
  const base = `/${mod.ruta}/${encodeURIComponent(user._id)}`
  const readLock = (): void => {
    request<{ data: Partial<Lock> }>('GET', base).then(({ data }) => {
      setLock(data.bloqueado === undefined ? undefined : { bloqueado: data.bloqueado, bloqueado_hasta: data.bloqueado_hasta ?? null })
    }, () => setLock(undefined))
  }
  useEffect(readLock, [base])
  const act = (action: () => Promise<string>): void => { void run(action).then((ok) => { readLock(); if (ok) onChanged() }) }
  const put = (body: Record<string, unknown>, text: string) => act(async () => { await request('PUT', base, body); return text })
  const post = (path: string) => act(async () => (await request<{ data: { message: string, sesiones_cerradas?: number } }>('POST', `${base}/${path}`)).data.message)

  return (
    <section class="panel" aria-labelledby="gestion-usuario">
      <h2 id="gestion-usuario">Usuario {user.username}</h2>
      <OutcomeLine outcome={outcome} />
      <LockLine lock={lock} />
      <form class="stacked" aria-label={`Datos de ${user.username}`} onSubmit={(e) => {
        e.preventDefault()
        const body = changes(user, e.currentTarget as HTMLFormElement, editable)
        if (Object.keys(body).length === 0) { act(async () => 'Sin cambios que guardar'); return }
        put(body, 'Datos guardados')
      }}>
        <Input id="gu-nombre" name="nombre" label="Nombre completo" outcome={outcome} autocomplete="off" defaultValue={user.nombre} />
        <Input id="gu-email" name="email" label="Correo electrónico" type="email" outcome={outcome} autocomplete="off" defaultValue={user.email ?? ''} />
        {editable.includes('personal_id') && <StaffInput id="gu-personal" mod={mod} modules={modules} value={staff} outcome={outcome} onChange={setStaff} />}
        <p><button type="submit">Guardar datos</button></p>
      </form>
      <form class="inline" onSubmit={(e) => { e.preventDefault(); put({ rol: formValues(e.currentTarget as HTMLFormElement).rol }, 'Rol cambiado') }}>
        <label for="gu-rol">Rol</label>
        <select id="gu-rol" name="rol">{(rol?.enum ?? []).map((r) => <option key={r} value={r} selected={r === user.rol}>{valueLabel(rol, r)}</option>)}</select>
        <button type="submit">Cambiar rol</button>
      </form>
      <p class="actions">
        {user.activo === false
          ? <button type="button" onClick={() => put({ activo: true }, 'Usuario activado')}>Activar</button>
          : <button type="button" onClick={() => put({ activo: false }, 'Usuario desactivado: sus sesiones se han cerrado')}>Desactivar</button>}
        <button type="button" onClick={() => post('cerrar-sesiones')}>Cerrar sesiones</button>
        <button type="button" onClick={() => post('desbloquear')}>Desbloquear</button>
      </p>
      <form class="inline" onSubmit={(e) => {
        e.preventDefault()
        const form = e.currentTarget as HTMLFormElement
        put({ password: formValues(form).password ?? '' }, 'Contraseña restablecida: sus sesiones se han cerrado')
        form.reset()
      }}>
        <Input id="gu-password" name="password" label="Contraseña nueva" type="password" outcome={outcome} autocomplete="new-password" />
        <button type="submit">Restablecer contraseña</button>
      </form>
    </section>
  )
}
