/** The sign-in screen: `Usuario`, `Contraseña`, `Entrar`; the API's message when refused. */
import { useState } from 'preact/hooks'
import { ApiError, signIn, type User } from './api.js'

export function SignIn ({ notice, onSignedIn }: { notice?: string, onSignedIn: (user: User) => void }) {
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    setBusy(true)
    setError(undefined)
    try {
      onSignedIn(await signIn(String(form.get('usuario')), String(form.get('contrasena'))))
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Error inesperado')
      setBusy(false)
    }
  }

  return (
    <main class="sign-in">
      <h1>Registros de Policía Local</h1>
      {notice !== undefined && <p class="notice" role="status">{notice}</p>}
      <form onSubmit={submit} aria-describedby={error === undefined ? undefined : 'sign-in-error'}>
        <label for="usuario">Usuario</label>
        <input id="usuario" name="usuario" autocomplete="username" required />
        <label for="contrasena">Contraseña</label>
        <input id="contrasena" name="contrasena" type="password" autocomplete="current-password" required />
        {error !== undefined && <p id="sign-in-error" class="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>Entrar</button>
      </form>
    </main>
  )
}
