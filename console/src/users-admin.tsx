/**
 * User administration (docs/user-guide.md "Console", for roles with `usuarios.*`), through the
 * public API only (docs/user-guide.md "Authentication and roles",
 * "Accounts and sessions"): the users with the staff record each is
 * linked to (by name), a new user (its password asked only here), and per
 * user (console/src/user-panel.tsx) its name, e-mail and staff record,
 * role, activation, a new password, closing its sessions, its login
 * lock-out. What a role may do is what GET /me/modulos says of `usuarios`.
 */
import { useState } from 'preact/hooks'
import { request } from './api.js'
import { Input, OutcomeLine, formValues, useOutcome, useRecords } from './admin-form.js'
import { fieldOf, valueLabel, type ModuleInfo } from './modules.js'
import { Person } from './people.js'
import { valueText } from './shown.js'
import { StaffInput, UserPanel, type UserRow } from './user-panel.js'

const COLUMNS = ['username', 'nombre', 'rol', 'activo', 'email', 'personal_id']

export function UsersAdmin ({ mod, modules }: { mod: ModuleInfo, modules: ModuleInfo[] }) {
  const columns = COLUMNS.filter((c) => mod.campos.some((f) => f.nombre === c))
  const [users, error, load] = useRecords<UserRow>(`/${mod.ruta}?campos=${columns.join(',')}&sort=username&limit=1000`)
  const [chosen, setChosen] = useState<string>()
  const [created, create] = useOutcome()
  const rol = fieldOf(mod, 'rol')
  const roles = rol?.enum ?? []
  const canCreate = mod.acciones.crear !== undefined
  const canEdit = mod.acciones.editar !== undefined
  const linked = columns.includes('personal_id')
  // A new user's staff record, picked (a hidden input of the form carries it).
  const [staff, setStaff] = useState('')
  const [round, setRound] = useState(0)

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const body = formValues(form)
    if (await create(async () => {
      const res = await request<{ data: UserRow }>('POST', `/${mod.ruta}`, body)
      return `Usuario creado: ${res.data.username} (${res.data._id})`
    })) {
      form.reset()
      setStaff('')
      setRound((r) => r + 1)
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
            <thead><tr><th scope="col">Usuario</th><th scope="col">Nombre</th><th scope="col">Rol</th><th scope="col">Activo</th><th scope="col">Correo</th>{linked && <th scope="col">Ficha de personal</th>}<th scope="col"><span class="visually-hidden">Acciones</span></th></tr></thead>
            <tbody>
              {users.map((u) => (
                <tr key={u._id}>
                  <th scope="row">{u.username}</th>
                  <td>{u.nombre}</td>
                  <td>{valueLabel(rol, u.rol)}</td>
                  <td>{u.activo === false ? 'No' : 'Sí'}</td>
                  <td>{valueText(undefined, u.email)}</td>
                  {linked && <td>{u.personal_id == null ? '—' : <Person id={u.personal_id} />}</td>}
                  <td>{canEdit && <button type="button" class="small" aria-expanded={chosen === u._id} onClick={() => setChosen(chosen === u._id ? undefined : u._id)}>Gestionar<span class="visually-hidden"> {u.username}</span></button>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {user !== undefined && <UserPanel key={user._id} mod={mod} modules={modules} user={user} onChanged={load} />}
      {canCreate && (
        <section aria-labelledby="nuevo-usuario">
          <h2 id="nuevo-usuario">Nuevo usuario</h2>
          <form class="stacked" onSubmit={(e) => { void submit(e) }}>
            <Input id="nu-username" name="username" label="Nombre de usuario" required outcome={created} autocomplete="off" hint="3 a 64 caracteres: a-z, 0-9, punto, guion y guion bajo" />
            <Input id="nu-nombre" name="nombre" label="Nombre completo" required outcome={created} autocomplete="off" />
            <Input id="nu-password" name="password" label="Contraseña inicial" type="password" required outcome={created} autocomplete="new-password" hint="Al menos 10 caracteres" />
            <Input id="nu-rol" name="rol" label="Rol" outcome={created}>
              <select id="nu-rol" name="rol" required><option value="">(elija un rol)</option>{roles.map((r) => <option key={r} value={r}>{valueLabel(rol, r)}</option>)}</select>
            </Input>
            <Input id="nu-email" name="email" label="Correo electrónico" type="email" outcome={created} autocomplete="off" />
            {linked && <StaffInput key={round} id="nu-personal" mod={mod} modules={modules} value={staff} outcome={created} onChange={setStaff} />}
            <OutcomeLine outcome={created} />
            <p><button type="submit">Crear usuario</button></p>
          </form>
        </section>
      )}
    </>
  )
}

