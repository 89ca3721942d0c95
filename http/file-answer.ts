/**
 * What every answer of a route that serves a file's bytes carries
 * (docs/user-guide.md "Evidence files"), errors and 304s included: a CSP
 * that loads nothing and sandboxes the document, so a file a browser would
 * run (SVG, HTML) runs no script in the service's origin even if opened;
 * and `no-store`, so decrypted evidence never stays in a shared tablet's
 * cache. Set by plugins/security-headers.ts from the route's config.
 */
import type { FastifyContextConfig } from 'fastify'
import './route-config.js'

export const FILE_ANSWER_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; sandbox",
  'cache-control': 'no-store',
}

/** The route config of a route that serves a file's bytes. */
export const FILE_ANSWER: FastifyContextConfig = { headers: FILE_ANSWER_HEADERS }
