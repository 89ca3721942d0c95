/**
 * The console's screens beyond a module's list and record (docs/user-guide.md "Console"): the
 * 092 room board, the dashboards, the administration and the
 * data-protection officer's screen, each shown to whom the API would
 * answer (learnt from GET /me/modulos, and GET /me's `proteccion_datos`).
 * Their paths start with `_`, which no module path may (core/registry/schema.ts).
 */
import type { ComponentChildren } from 'preact'
import { USERS_MODULE, type ModuleInfo } from './modules.js'
import { href, type Route } from './route.js'
import { BOARD_MODULE, BoardScreen } from './board-screen.js'
import { UsersAdmin } from './users-admin.js'
import { SubscriptionsAdmin } from './subscriptions-admin.js'
import { DASHBOARD_PATH, DashboardScreen } from './dashboard.js'
import { DATA_PROTECTION_PATH, DataProtectionScreen } from './data-protection-screen.js'

export const BOARD_PATH = '_sala092'
export const USERS_PATH = '_usuarios'
export const SUBSCRIPTIONS_PATH = '_suscripciones'
/** The subscriptions module of the default modules.yaml (`subscriptions: true`). */
const SUBSCRIPTIONS = 'suscripciones'

interface Tool { path: string, label: string, screen: (modules: ModuleInfo[], route: Route) => ComponentChildren }

/** `protectsData`: the caller is the data-protection officer (GET /me). */
function tools (modules: ModuleInfo[], protectsData: boolean): Tool[] {
  const out: Tool[] = []
  if (modules.length > 0) out.push({ path: DASHBOARD_PATH, label: 'Paneles', screen: (m, route) => <DashboardScreen key={route.path[1]} modules={m} ruta={route.path[1]} /> })
  const board = modules.find((m) => m.nombre === BOARD_MODULE)
  if (board !== undefined) out.push({ path: BOARD_PATH, label: 'Tablero 092', screen: () => <BoardScreen mod={board} /> })
  const users = modules.find((m) => m.nombre === USERS_MODULE)
  if (users !== undefined && (users.acciones.crear !== undefined || users.acciones.editar !== undefined)) {
    out.push({ path: USERS_PATH, label: 'Administrar usuarios', screen: () => <UsersAdmin mod={users} modules={modules} /> })
  }
  const subs = modules.find((m) => m.nombre === SUBSCRIPTIONS)
  const roles = users?.campos.find((f) => f.nombre === 'rol')?.enum ?? []
  if (subs !== undefined) out.push({ path: SUBSCRIPTIONS_PATH, label: 'Administrar suscripciones', screen: () => <SubscriptionsAdmin mod={subs} modules={modules} roles={roles} /> })
  if (protectsData) out.push({ path: DATA_PROTECTION_PATH, label: 'Protección de datos', screen: (m) => <DataProtectionScreen modules={m} /> })
  return out
}

export function ToolsNav ({ modules, route, protectsData }: { modules: ModuleInfo[], route: Route, protectsData: boolean }) {
  const list = tools(modules, protectsData)
  if (list.length === 0) return null
  return (
    <nav class="tools" aria-label="Herramientas">
      <ul>
        {list.map((t) => <li key={t.path}><a href={href([t.path])} aria-current={route.path[0] === t.path ? 'page' : undefined}>{t.label}</a></li>)}
      </ul>
    </nav>
  )
}

/** The screen of a tool the address names, or undefined when it names none the caller has. */
export function toolScreen (modules: ModuleInfo[], route: Route, protectsData: boolean): ComponentChildren | undefined {
  return tools(modules, protectsData).find((t) => t.path === route.path[0])?.screen(modules, route)
}
