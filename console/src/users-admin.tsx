/**
 * User administration (docs/user-guide.md "Console", for roles with `usuarios.*`), through the
 * public API only (docs/user-guide.md "Authentication and roles",
 * "Accounts and sessions"): the users, a new user, and per user its role,
 * activation, a new password, closing its sessions, its login lock-out
 * (shown, and lifted by `Desbloquear`). What a role may do is what GET /me/modulos says of `usuarios`.
 */
import { useEffect, useState } from 'preact/hooks'
import { request } from './api.js'
import { Input, OutcomeLine, formValues, useOutcome, useRecords } from './admin-form.js'
import { show, type ModuleInfo } from './modules.js'

type UserRow = { _id: string, username: string, nombre: string, rol: string, activo: boolean | null, email?: string | null }
const COLUMNS = ['username', 'nombre', 'rol', 'activo', 'email']

export function UsersAdmin ({ mod }: { mod: ModuleInfo }) {
  const [users, error, load] = useRecords<UserRow>(`/${mod.ruta}?campos=${COLUMNS.join(',')}&sort=username&limit=1000`)
  const [chosen, setChosen] = useState<string>()
  const [created, create] = useOutcome()
  const roles = mod.campos.find((f) => f.nombre === 'rol')?.enum ?? []
  const canCreate = mod.acciones.crear !== undefined
  const canEdit = mod.acciones.editar !== undefined


  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const body = formValues(form)
    if (await create(async () => {
      const res = await request<{ data: UserRow }>('POST', `/${mod.ruta}`, body)
      return `Usuario creado: ${res.data.username} (${res.data._id})`
    })) {
      form.reset()
      load()
    }
  }

  const user = users?.find((u) => u._id === chosen)
  return (
    <>
      <h1>Administración de usuarios</h1>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {users !== undefined && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Usuarios ({users.length})</caption>
            <thead><tr><th scope="col">Usuario</th><th scope="col">Nombre</th><th scope="col">Rol</th><th scope="col">Activo</th><th scope="col">Correo</th><th scope="col"><span class="visually-hidden">Acciones</span></th></tr></thead>
            <tbody>
              {users.map((u) => (
                <tr key={u._id}>
                  <th scope="row">{u.username}</th>
                  <td>{u.nombre}</td>
                  <td>{u.rol}</td>
                  <td>{u.activo === false ? 'No' : 'Sí'}</td>
                  <td>{show(u.email)}</td>
                  <td>{canEdit && <button type="button" class="small" aria-expanded={chosen === u._id} onClick={() => setChosen(chosen === u._id ? undefined : u._id)}>Gestionar<span class="visually-hidden"> {u.username}</span></button>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {user !== undefined && <UserPanel key={user._id} mod={mod} user={user} roles={roles} onChanged={load} />}
      {canCreate && (
        <section aria-labelledby="nuevo-usuario">
          <h2 id="nuevo-usuario">Nuevo usuario</h2>
          <form class="stacked" onSubmit={(e) => { void submit(e) }}>
            <Input id="nu-username" name="username" label="Nombre de usuario" required outcome={created} autocomplete="off" hint="3 a 64 caracteres: a-z, 0-9, punto, guion y guion bajo" />
            <Input id="nu-nombre" name="nombre" label="Nombre completo" required outcome={created} autocomplete="off" />
            <Input id="nu-password" name="password" label="Contraseña inicial" type="password" required outcome={created} autocomplete="new-password" hint="Al menos 10 caracteres" />
            <Input id="nu-rol" name="rol" label="Rol" outcome={created}>
              <select id="nu-rol" name="rol" required><option value="">(elija un rol)</option>{roles.map((r) => <option key={r} value={r}>{r}</option>)}</select>
            </Input>
            <Input id="nu-email" name="email" label="Correo electrónico" type="email" outcome={created} autocomplete="off" />
            <OutcomeLine outcome={created} />
            <p><button type="submit">Crear usuario</button></p>
          </form>
        </section>
      )}
    </>
  )
}

interface Lock { bloqueado: boolean, bloqueado_hasta: string | null }

/** The service's `AAAA-MM-DD HH:MM:SS` as Spanish readers write it: `dd/mm/aaaa hh:mm`. */
function spanishDateTime (text: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})/.exec(text)
  return m === null ? text : `${m[3]}/${m[2]}/${m[1]} ${m[4]}:${m[5]}`
}

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
        ? `Bloqueado hasta ${lock.bloqueado_hasta === null ? 'nuevo aviso' : spanishDateTime(lock.bloqueado_hasta)} por intentos fallidos de inicio de sesión`
        : 'Sin bloqueo de inicio de sesión'}
    </p>
  )
}

/** One user's actions: each a request of its own, its answer said beside it. */
function UserPanel ({ mod, user, roles, onChanged }: { mod: ModuleInfo, user: UserRow, roles: string[], onChanged: () => void }) {
  const [outcome, run] = useOutcome()
  const [lock, setLock] = useState<Lock>()
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
      <form class="inline" onSubmit={(e) => { e.preventDefault(); put({ rol: formValues(e.currentTarget as HTMLFormElement).rol }, 'Rol cambiado') }}>
        <label for="gu-rol">Rol</label>
        <select id="gu-rol" name="rol">{roles.map((r) => <option key={r} value={r} selected={r === user.rol}>{r}</option>)}</select>
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
