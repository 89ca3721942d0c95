/**
 * Webhook subscriptions (docs/user-guide.md "Webhooks
 * (suscripciones)"), through the public API only: the list, a new one (its
 * secret shown once), pause and resume (`activa`), resuming one paused as
 * failing (`reanudar`), delivering again from a position (`reproducir`),
 * deleting, and each one's delivery state and
 * attempts (`/entregas`).
 */
import { useEffect, useState } from 'preact/hooks'
import { request } from './api.js'
import { Input, OutcomeLine, formValues, useOutcome, useRecords } from './admin-form.js'
import type { ModuleInfo } from './modules.js'
import { valueText } from './shown.js'
import { dateTimeText, numberText } from './spanish.js'

interface Sub { _id: string, descripcion?: string | null, url: string, modulos: string[], tipos?: string[] | null, filtro?: string | null, rol: string, activa: boolean | null }
interface Delivery { fecha: string, posicion: number, estado: number | null, latencia_ms: number | null, error: string | null, resultado: string }
interface State { posicion: number, pausada: boolean, fallando_desde: string | null, intentos: number, proximo_intento: string | null }
const COLUMNS = ['descripcion', 'url', 'modulos', 'tipos', 'filtro', 'rol', 'activa']

const list = (v: string | undefined): string[] => (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')

export function SubscriptionsAdmin ({ mod, modules, roles }: { mod: ModuleInfo, modules: ModuleInfo[], roles: string[] }) {
  const [subs, error, load] = useRecords<Sub>(`/${mod.ruta}?campos=${COLUMNS.join(',')}&sort=-_id&limit=1000`)
  const [chosen, setChosen] = useState<string>()
  const [created, create] = useOutcome()
  const [secret, setSecret] = useState<string>()


  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const v = formValues(form)
    const body = { ...v, modulos: new FormData(form).getAll('modulos').map(String), tipos: list(v.tipos) }
    setSecret(undefined)
    if (await create(async () => {
      const res = await request<{ data: Sub & { secreto?: string } }>('POST', `/${mod.ruta}`, body)
      setSecret(res.data.secreto)
      return `Suscripción creada: ${res.data._id}`
    })) {
      form.reset()
      load()
    }
  }

  const sub = subs?.find((s) => s._id === chosen)
  return (
    <>
      <h1>Suscripciones (webhooks)</h1>
      {error !== undefined && <p class="error" role="alert">{error}</p>}
      {subs !== undefined && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Suscripciones ({subs.length})</caption>
            <thead><tr><th scope="col">Referencia</th><th scope="col">Dirección</th><th scope="col">Módulos</th><th scope="col">Tipos</th><th scope="col">Rol</th><th scope="col">Activa</th><th scope="col"><span class="visually-hidden">Acciones</span></th></tr></thead>
            <tbody>
              {subs.map((s) => (
                <tr key={s._id}>
                  <th scope="row">{s._id}</th>
                  <td class="wrap">{s.url}{s.descripcion != null && <><br /><small>{s.descripcion}</small></>}</td>
                  <td>{s.modulos.join(', ')}{s.filtro != null && <><br /><small>{s.filtro}</small></>}</td>
                  <td>{(s.tipos ?? []).length === 0 ? 'Todos' : s.tipos!.join(', ')}</td>
                  <td>{s.rol}</td>
                  <td>{s.activa === false ? 'No' : 'Sí'}</td>
                  <td><button type="button" class="small" aria-expanded={chosen === s._id} onClick={() => setChosen(chosen === s._id ? undefined : s._id)}>Gestionar<span class="visually-hidden"> {s._id}</span></button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {sub !== undefined && <SubscriptionPanel key={sub._id} mod={mod} sub={sub} onChanged={load} />}
      {mod.acciones.crear !== undefined && (
        <section aria-labelledby="nueva-suscripcion">
          <h2 id="nueva-suscripcion">Nueva suscripción</h2>
          <form class="stacked" onSubmit={(e) => { void submit(e) }}>
            <Input id="ns-url" name="url" label="Dirección (URL)" type="url" required outcome={created} hint="Recibe un POST firmado por cada evento" />
            <Input id="ns-descripcion" name="descripcion" label="Descripción" outcome={created} />
            <fieldset class="choices">
              <legend>Módulos</legend>
              {modules.filter((m) => m.nombre !== mod.nombre).map((m) => <label key={m.nombre} class="check"><input type="checkbox" name="modulos" value={m.nombre} /> {m.etiqueta}</label>)}
            </fieldset>
            <Input id="ns-tipos" name="tipos" label="Tipos de evento" outcome={created} hint="Separados por comas, p. ej. sala092.creado; vacío: todos" />
            <Input id="ns-filtro" name="filtro" label="Filtro" outcome={created} hint="Solo con un módulo, p. ej. tipo_incidencia=urgente" />
            {/* The roles are the users module's choices; a caller who cannot see it types one. */}
            {roles.length === 0
              ? <Input id="ns-rol" name="rol" label="Rol que da forma a los eventos" required outcome={created} />
              : (
                <Input id="ns-rol" name="rol" label="Rol que da forma a los eventos" outcome={created}>
                  <select id="ns-rol" name="rol" required>{roles.map((r) => <option key={r} value={r}>{r}</option>)}</select>
                </Input>
                )}
            <OutcomeLine outcome={created} />
            {created?.detalles?.some((d) => d.campo === 'modulos') === true && <p class="error">Módulos: {created.detalles.find((d) => d.campo === 'modulos')!.mensaje}</p>}
            {secret !== undefined && <p class="notice">Secreto de firma (se muestra solo ahora; guárdelo en el sistema receptor): <code class="secret">{secret}</code></p>}
            <p><button type="submit">Crear suscripción</button></p>
          </form>
        </section>
      )}
    </>
  )
}

function SubscriptionPanel ({ mod, sub, onChanged }: { mod: ModuleInfo, sub: Sub, onChanged: () => void }) {
  const [outcome, run] = useOutcome()
  const [state, setState] = useState<{ estado: State, entregas: Delivery[], total: number }>()
  const base = `/${mod.ruta}/${encodeURIComponent(sub._id)}`
  const deliveries = (): void => { request<{ data: { estado: State, entregas: Delivery[], total: number } }>('GET', `${base}/entregas?limit=20`).then((res) => setState(res.data), () => undefined) }
  useEffect(deliveries, [base])
  // After a delete there are no deliveries to ask for (404): the list drops the panel.
  const act = (action: () => Promise<string>, gone = false): void => { void run(action).then((ok) => { if (ok) { onChanged(); if (!gone) deliveries() } }) }
  const canEdit = mod.acciones.editar !== undefined

  return (
    <section class="panel" aria-labelledby="gestion-suscripcion">
      <h2 id="gestion-suscripcion">Suscripción {sub._id}</h2>
      <OutcomeLine outcome={outcome} />
      <p class="actions">
        {canEdit && (sub.activa === false
          ? <button type="button" onClick={() => act(async () => { await request('PUT', base, { activa: true }); return 'Suscripción reanudada' })}>Reanudar</button>
          : <button type="button" onClick={() => act(async () => { await request('PUT', base, { activa: false }); return 'Suscripción pausada' })}>Pausar</button>)}
        {canEdit && state?.estado.pausada === true && <button type="button" onClick={() => act(async () => { await request('POST', `${base}/reanudar`); return 'Entregas reanudadas' })}>Reanudar entregas</button>}
        <button type="button" onClick={deliveries}>Actualizar entregas</button>
        {mod.acciones.eliminar !== undefined && <button type="button" class="danger" onClick={() => act(async () => (await request<{ data: { message: string } }>('DELETE', base)).data.message, true)}>Eliminar</button>}
      </p>
      {canEdit && (
        <form class="inline" onSubmit={(e) => {
          e.preventDefault()
          const desde = Number(formValues(e.currentTarget as HTMLFormElement).desde)
          act(async () => { await request('POST', `${base}/reproducir`, { desde }); return `Entregas de nuevo desde la posición ${desde}` })
        }}>
          <Input id="gs-desde" name="desde" label="Entregar de nuevo desde la posición" type="number" outcome={outcome} required />
          <button type="submit">Reproducir</button>
        </form>
      )}
      {state !== undefined && (
        <>
          <h3>Estado de entrega</h3>
          <dl class="fields">
            <div><dt>Última posición entregada</dt><dd>{state.estado.posicion}</dd></div>
            <div><dt>Pausada por fallos</dt><dd>{state.estado.pausada ? 'Sí' : 'No'}</dd></div>
            <div><dt>Fallando desde</dt><dd>{state.estado.fallando_desde === null ? '—' : dateTimeText(state.estado.fallando_desde)}</dd></div>
            <div><dt>Intentos</dt><dd>{state.estado.intentos}</dd></div>
            <div><dt>Próximo intento</dt><dd>{state.estado.proximo_intento === null ? '—' : dateTimeText(state.estado.proximo_intento)}</dd></div>
          </dl>
          <div class="table-wrap">
            <table>
              <caption>Últimos intentos de entrega ({numberText(state.total)} en total)</caption>
              <thead><tr><th scope="col">Fecha</th><th scope="col">Posición</th><th scope="col">Estado HTTP</th><th scope="col">Latencia (ms)</th><th scope="col">Resultado</th><th scope="col">Error</th></tr></thead>
              <tbody>
                {state.entregas.map((d) => <tr key={`${d.posicion}-${d.fecha}`}><td>{dateTimeText(d.fecha)}</td><td>{d.posicion}</td><td>{valueText(undefined, d.estado)}</td><td>{valueText(undefined, d.latencia_ms)}</td><td>{d.resultado}</td><td>{valueText(undefined, d.error)}</td></tr>)}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  )
}
