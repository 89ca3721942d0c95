/**
 * One delivery attempt (docs/user-guide.md "Webhooks (suscripciones)"): an
 * HTTP POST of the event JSON, signed as Standard Webhooks says
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`,
 * the `standardwebhooks` package). A 2xx within the timeout is success; a
 * timeout, a connection error, a 5xx, a 408 or a 429 is worth a retry;
 * any other answer (3xx, 4xx) is given up (docs/decisions.md "Webhooks: a
 * 4xx gives the event up"). Redirects are not followed. A failure with no
 * answer is recorded as `sin respuesta` whatever its cause (refused,
 * reset, unreachable, timed out, TLS), so deliveries cannot map which
 * ports of a host are open; the cause goes to the server's log only.
 */
import { request as httpRequest, type Agent as HttpAgent } from 'node:http'
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https'
import { isIP } from 'node:net'
import { isNonPublicAddress } from '../../core/non-public-address.js'
import { Webhook } from 'standardwebhooks'
import { guardedLookup, hostOf, PrivateAddressError } from './target-address.js'

/** A 2xx within this long is success (docs/user-guide.md "Webhooks (suscripciones)"). */
export const DELIVERY_TIMEOUT_MS = 10_000

export type AttemptOutcome = 'entregado' | 'reintento' | 'descartado'

export interface Attempt {
  readonly outcome: AttemptOutcome
  /** The status answered, if any. */
  readonly estado?: number
  readonly latencia_ms: number
  readonly error?: string
  /** Why no answer came (a network error, a timeout): for the server's log, never recorded. */
  readonly cause?: Error
}

/** What a delivery that got no HTTP answer records, whatever the cause. */
export const NO_ANSWER = 'sin respuesta'

export interface Delivery {
  readonly url: string
  /** Stable across the retries of one event. */
  readonly messageId: string
  readonly body: string
  /** `whsec_…` */
  readonly secret: string
  readonly allowPrivate: boolean
  /** Keep-alive connection pools (the deliverer's); none: a connection per attempt. */
  readonly agents?: Agents
}

export interface Agents { readonly http: HttpAgent, readonly https: HttpsAgent }

const retryable = (status: number): boolean => status >= 500 || status === 429 || status === 408

/** The signed headers of a delivery made at `at`. */
export function signedHeaders (d: Pick<Delivery, 'messageId' | 'body' | 'secret'>, at: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'registros-policia-webhooks',
    'webhook-id': d.messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(d.secret).sign(d.messageId, at, d.body),
  }
}

/** Makes one attempt; never throws. */
export async function sendEvent (d: Delivery): Promise<Attempt> {
  const started = performance.now()
  const took = (): number => Math.round(performance.now() - started)
  let url: URL
  try { url = new URL(d.url) } catch { return { outcome: 'descartado', latencia_ms: 0, error: 'url no válida' } }
  const host = hostOf(url)
  // A literal address is connected to without a lookup: check it here.
  if (!d.allowPrivate && isIP(host) !== 0 && isNonPublicAddress(host)) {
    return { outcome: 'reintento', latencia_ms: 0, error: new PrivateAddressError(host, host).message }
  }
  const headers = { ...signedHeaders(d, new Date()), 'content-length': String(Buffer.byteLength(d.body)) }
  const https = url.protocol === 'https:'
  const send = https ? httpsRequest : httpRequest
  const agent = d.agents === undefined ? undefined : https ? d.agents.https : d.agents.http
  return new Promise<Attempt>((resolve) => {
    const req = send(url, {
      method: 'POST',
      headers,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      ...(agent !== undefined && { agent }),
      ...(!d.allowPrivate && { lookup: guardedLookup as never }),
    }, (res) => {
      const status = res.statusCode ?? 0
      // The answer's body is not kept: read it to the end so the socket is freed.
      res.resume()
      res.on('end', () => {
        const ok = status >= 200 && status < 300
        resolve({ outcome: ok ? 'entregado' : retryable(status) ? 'reintento' : 'descartado', estado: status, latencia_ms: took(), ...(!ok && { error: `HTTP ${status}` }) })
      })
      res.on('error', (err) => { resolve({ outcome: 'reintento', estado: status, latencia_ms: took(), error: 'respuesta incompleta', cause: err }) })
    })
    req.on('error', (err) => {
      // The service's own refusal says so; any other error is the same `sin respuesta`.
      const refused = err instanceof PrivateAddressError
      resolve({ outcome: 'reintento', latencia_ms: took(), error: refused ? err.message : NO_ANSWER, cause: err })
    })
    req.end(d.body)
  })
}
