/**
 * The caller's own password change (docs/user-guide.md "Console", PUT /me/password): the
 * current one and the new one; the API's refusal shown beside the field it
 * names. Every other session of the user ends; this one stays.
 */
import { useState } from 'preact/hooks'
import { ApiError, request, type Detail } from './api.js'

const FIELDS = [
  { name: 'password_actual', label: 'Contraseña actual', autocomplete: 'current-password' },
  { name: 'password_nueva', label: 'Contraseña nueva', autocomplete: 'new-password' },
] as const

export function PasswordScreen () {
  const [error, setError] = useState<string>()
  const [details, setDetails] = useState<Detail[]>([])
  const [done, setDone] = useState<string>()

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const data = new FormData(form)
    setError(undefined)
    setDetails([])
    setDone(undefined)
    try {
      const res = await request<{ data: { message: string } }>('PUT', '/me/password', { password_actual: String(data.get('password_actual')), password_nueva: String(data.get('password_nueva')) })
      form.reset()
      setDone(res.data.message)
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Error inesperado')
      setDetails(err instanceof ApiError ? err.detalles ?? [] : [])
    }
  }

  return (
    <>
      <h1>Cambiar contraseña</h1>
      <p>Las demás sesiones abiertas con su usuario se cerrarán; esta sigue abierta.</p>
      <form class="stacked" onSubmit={submit}>
        {FIELDS.map((f) => {
          const detail = details.filter((d) => d.campo === f.name).map((d) => d.mensaje).join('; ')
          return (
            <div key={f.name}>
              <label for={f.name}>{f.label}</label>
              <input id={f.name} name={f.name} type="password" autocomplete={f.autocomplete} required aria-invalid={detail === '' ? undefined : 'true'} aria-describedby={detail === '' ? undefined : `${f.name}-error`} />
              {detail !== '' && <p id={`${f.name}-error`} class="error">{detail}</p>}
            </div>
          )
        })}
        {error !== undefined && <p class="error" role="alert">{error}</p>}
        {done !== undefined && <p class="ok" role="status">{done}</p>}
        <button type="submit">Cambiar contraseña</button>
      </form>
    </>
  )
}
