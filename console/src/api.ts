/**
 * The console's only way to the service: the public API, same origin. The
 * token lives in this module's memory and nowhere else — never in a URL,
 * localStorage, sessionStorage or a cookie a script can read — so a reload
 * or a closed tab asks to sign in again (docs/decisions.md "The console
 * keeps its token in memory").
 */
import { inertBlob } from './file-safety.js'

export interface Detail { campo: string, mensaje: string }

export class ApiError extends Error {
  constructor (readonly status: number, message: string, readonly codigo?: string, readonly detalles?: Detail[]) {
    super(message)
  }
}

let token: string | undefined
const LOGIN = '/auth/login'
let onExpired: (message: string) => void = () => undefined

/** What the console does when the service stops taking the token (revoked, expired): back to sign-in, with the reason. */
export function whenExpired (handler: (message: string) => void): void { onExpired = handler }

export function signedIn (): boolean { return token !== undefined }

/** The header a request the console makes itself (a stream, console/src/event-stream.ts) carries: the token stays out of the URL. */
export function authorization (): Record<string, string> {
  return token === undefined ? {} : { Authorization: `Bearer ${token}` }
}

/** One request; the body parsed as the S9 envelope, its `error` thrown as an ApiError. */
export async function request<T = any> (method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', ...extra }
  if (token !== undefined) headers.Authorization = `Bearer ${token}`
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  let res: Response
  try {
    // Only the login sends and takes a cookie: the device value's, HttpOnly (docs/decisions.md "The console keeps the device value in an HttpOnly cookie").
    res = await fetch(path, { method, headers, cache: 'no-store', credentials: path === LOGIN ? 'same-origin' : 'omit', ...(body !== undefined && { body: JSON.stringify(body) }) })
  } catch {
    throw new ApiError(0, 'No se pudo conectar con el servicio')
  }
  const json = await res.json().catch(() => undefined) as Envelope | undefined
  if (res.ok && json?.success === true) return json as T
  throw refused(res, json, path)
}

interface Envelope { success?: boolean, error?: string, codigo?: string, detalles?: Detail[] }

/** The S9 error of an answer; a 401 to a signed-in request ends the session here too. */
function refused (res: Response, json: Envelope | undefined, path: string): ApiError {
  const err = new ApiError(res.status, json?.error ?? `Error ${res.status}`, json?.codigo, json?.detalles)
  if (res.status === 401 && token !== undefined && !path.startsWith('/auth/')) {
    token = undefined
    onExpired(err.message)
  }
  return err
}

/**
 * A file the API streams (an export, an evidence file), fetched with the
 * token and saved by the browser; its name. Always saved as
 * `application/octet-stream`, never rendered: an SVG or HTML file would
 * run its script in this origin (console/src/file-safety.ts).
 */
export async function download (path: string): Promise<string> {
  const res = await fetchFile(path)
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'exportacion'
  save(await res.blob(), name)
  return name
}

/** Bytes saved by the browser under a name, as `application/octet-stream` (never rendered). */
export function save (blob: Blob, name: string): void {
  const url = URL.createObjectURL(inertBlob(blob))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.rel = 'noopener'
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

/**
 * The signed-in user; from GET /me, `lecturas`: may read the read log (a
 * record's accesses), `proteccion_datos`: is the data-protection officer
 * (docs/user-guide.md "Personal data").
 */
export interface User { id: string, username: string, nombre: string, rol: string, lecturas: boolean, proteccion_datos: boolean }

export async function signIn (username: string, password: string): Promise<User> {
  const res = await request<{ data: { token: string, user: Omit<User, 'lecturas' | 'proteccion_datos'> } }>('POST', LOGIN, { username, password, recordar_dispositivo: true })
  token = res.data.token
  const me = await request<{ data: { lecturas?: boolean, proteccion_datos?: boolean } }>('GET', '/me')
  return { ...res.data.user, lecturas: me.data.lecturas === true, proteccion_datos: me.data.proteccion_datos === true }
}

/** Revokes the token on the service, then forgets it (forgotten even when the service cannot be reached). */
export async function signOut (): Promise<void> {
  try {
    if (token !== undefined) await request('POST', '/auth/logout')
  } finally {
    token = undefined
  }
}

/** A file the API streams, fetched with the token; the caller reads its body (console/src/file-safety.ts decides what may be shown). */
export async function fetchFile (path: string): Promise<Response> {
  const res = await fetch(path, { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` }, cache: 'no-store', credentials: 'omit' })
  if (!res.ok) throw refused(res, await res.json().catch(() => undefined) as Envelope | undefined, path)
  return res
}

/**
 * A raw-body upload (an evidence file's `POST …/archivos/{campo}?nombre=`,
 * an import's `POST /{module}/importar`) through XMLHttpRequest, the one
 * browser API that reports upload progress. `type`: the Content-Type, else
 * the file's own; `headers`: more of them (an Idempotency-Key).
 */
export function upload<T = any> (path: string, file: Blob, onProgress: (fraction: number) => void, opts: { type?: string, headers?: Record<string, string> } = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', path)
    xhr.withCredentials = false
    xhr.setRequestHeader('Accept', 'application/json')
    if (token !== undefined) xhr.setRequestHeader('Authorization', `Bearer ${token}`)
    xhr.setRequestHeader('Content-Type', opts.type ?? (file.type === '' ? 'application/octet-stream' : file.type))
    for (const [name, value] of Object.entries(opts.headers ?? {})) xhr.setRequestHeader(name, value)
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total) }
    xhr.onerror = () => reject(new ApiError(0, 'No se pudo conectar con el servicio'))
    xhr.onload = () => {
      let json: Envelope | undefined
      try { json = JSON.parse(xhr.responseText) as Envelope } catch { json = undefined }
      if (xhr.status >= 200 && xhr.status < 300 && json?.success === true) resolve(json as T)
      else reject(refused(new Response(null, { status: xhr.status }), json, path))
    }
    xhr.send(file)
  })
}
