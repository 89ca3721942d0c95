/**
 * The console once loaded: the sign-in screen, or the signed-in frame (the
 * modules the caller may see, learnt from GET /me/modulos) around the
 * screen the address names.
 */
import { useEffect, useState } from 'preact/hooks'
import { request, signOut, whenExpired, type User } from './api.js'
import { watchIdle } from './idle.js'
import { forgetPeople } from './people.js'
import { fieldOf, USERS_MODULE, valueLabel, type ModuleInfo } from './modules.js'
import { href, useRoute, type Route } from './route.js'
import { SignIn } from './sign-in.js'
import { ListScreen } from './list-screen.js'
import { RecordScreen } from './record-screen.js'
import { PasswordScreen } from './password-screen.js'
import { EDIT_PATH, FormScreen, NEW_PATH } from './form-screen.js'
import { ToolsNav, toolScreen } from './tools.js'
import { REPORT_PATH, ReportScreen } from './report-screen.js'
import { IMPORT_PATH, ImportScreen } from './import-screen.js'

/** The console's own screens start with `_`, which no module path may (core/registry/schema.ts). */
const PASSWORD_PATH = '_contrasena'

export function App () {
  const [user, setUser] = useState<User>()
  const [modules, setModules] = useState<ModuleInfo[]>()
  const [notice, setNotice] = useState<string>()
  const route = useRoute()

  const end = (message?: string): void => {
    setUser(undefined)
    setModules(undefined)
    forgetPeople()
    setNotice(message)
    location.hash = ''
  }
  useEffect(() => whenExpired((message) => end(`Sesión terminada: ${message}`)), [])
  useEffect(() => {
    if (user === undefined) return
    void request<{ data: ModuleInfo[] }>('GET', '/me/modulos').then((res) => setModules(res.data), () => setModules([]))
    return watchIdle(() => { void signOut().finally(() => end('Sesión cerrada por inactividad (30 minutos)')) })
  }, [user])

  if (user === undefined) return <SignIn notice={notice} onSignedIn={(u) => { setNotice(undefined); setUser(u) }} />
  return (
    <div class="frame">
      <a class="skip" href="#contenido" onClick={(e) => { e.preventDefault(); document.getElementById('contenido')?.focus() }}>Saltar al contenido</a>
      <header>
        <p class="brand">Registros de Policía Local</p>
        <p class="who">{user.nombre} ({roleLabel(modules ?? [], user.rol)})</p>
        <a class="own" href={href([PASSWORD_PATH])}>Cambiar contraseña</a>
        <button type="button" onClick={() => { void signOut().finally(() => end('Sesión cerrada')) }}>Cerrar sesión</button>
      </header>
      <nav aria-label="Módulos">
        <ul>
          {(modules ?? []).map((m) => <li key={m.nombre}><a href={href([m.ruta])} aria-current={route.path[0] === m.ruta ? 'page' : undefined}>{m.etiqueta}</a></li>)}
        </ul>
      </nav>
      <ToolsNav modules={modules ?? []} route={route} protectsData={user.proteccion_datos} />
      <main id="contenido" tabIndex={-1}>
        {modules === undefined ? <p aria-busy="true">Cargando…</p> : <Screen modules={modules} route={route} user={user} />}
      </main>
    </div>
  )
}

/** The role by its label in the users module (`Superadministrador`), for a role that may see it; else its name. */
function roleLabel (modules: ModuleInfo[], rol: string): string {
  const users = modules.find((m) => m.nombre === USERS_MODULE)
  return valueLabel(users === undefined ? undefined : fieldOf(users, 'rol'), rol)
}

function Screen ({ modules, route, user }: { modules: ModuleInfo[], route: Route, user: User }) {
  const [ruta, id, sub] = route.path
  const mod = modules.find((m) => m.ruta === ruta)
  if (ruta === undefined) return <><h1>Inicio</h1><p>Elija un módulo en la lista.</p></>
  if (ruta === PASSWORD_PATH) return <PasswordScreen />
  const tool = toolScreen(modules, route, user.proteccion_datos)
  if (tool !== undefined) return tool
  if (mod === undefined) return <><h1>Módulo no disponible</h1><p>No existe o no tiene permiso para verlo.</p></>
  if (id === REPORT_PATH) return <ReportScreen key={ruta} mod={mod} modules={modules} params={route.params} />
  if (id === IMPORT_PATH) return <ImportScreen key={ruta} mod={mod} />
  if (id === NEW_PATH) return <FormScreen key={`${ruta}/${id}`} mod={mod} modules={modules} />
  if (id !== undefined && sub === EDIT_PATH) return <FormScreen key={`${ruta}/${id}/${sub}`} mod={mod} id={id} modules={modules} />
  if (id !== undefined) return <RecordScreen key={`${ruta}/${id}`} mod={mod} id={id} modules={modules} readsLog={user.lecturas} />
  return <ListScreen key={ruta} mod={mod} modules={modules} params={route.params} />
}
