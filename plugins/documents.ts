/**
 * Decorates the app with the printer of records (`app.printer`,
 * records/documents/printer.ts): the force's name and logo and the fonts
 * read once, codes signed with the checkpoint key (docs/user-guide.md
 * "Printed records"). A FORCE_LOGO that cannot be used stops the start.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { loadDocumentStyle } from '../records/documents/document-style.js'
import { Printer } from '../records/documents/printer.js'

declare module 'fastify' {
  interface FastifyInstance {
    printer: Printer
  }
}

async function documentsPlugin (app: FastifyInstance): Promise<void> {
  const { signer } = app
  app.decorate('printer', new Printer((message) => signer.signMessage(message), loadDocumentStyle(app.config.printing), app.config.timeZone))
}

export default fp(documentsPlugin, { name: 'policia-documents', fastify: '5.x', dependencies: ['policia-config', 'policia-system-keys'] })
