/**
 * `npm start`: loads configuration and modules.yaml, builds the app, listens,
 * prints where it is and how to log in, and shuts down gracefully on SIGTERM
 * or SIGINT (in-flight requests finish, then connections close).
 */
import { loadConfig } from '../core/config.js'
import { ConfigError } from '../core/errors.js'
import { buildApp } from '../app.js'

async function main (): Promise<void> {
  const config = loadConfig()
  const app = await buildApp({ config })
  await app.listen({ port: config.port, host: config.host })
  const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host
  const url = `http://${shown}:${(app.server.address() as { port: number }).port}`
  const lines = [
    '',
    `  Registros de Policía Local escuchando en ${url}`,
    `  Base de datos: ${app.databaseKind === 'embedded' ? `embebida (PGlite) en ${config.dataDir}/pgdata, socket en ${String(app.orm.config.get('host'))}` : 'PostgreSQL'}; estado compartido: ${app.stores.kind === 'redis' ? 'Redis' : 'en proceso'}`,
    `  Puntos de control de la cadena: ${config.checkpointDir} (clave pública: ${app.signer.publicKey})`,
    `  Documentación OpenAPI: ${url}/docs`,
  ]
  if (app.firstLogin !== undefined) {
    lines.push(`  Primer superadmin creado: usuario "${app.firstLogin.username}"`)
    if (app.firstLogin.generatedPassword !== undefined) {
      lines.push(`  Contraseña generada (se muestra solo esta vez): ${app.firstLogin.generatedPassword}`)
    }
  }
  lines.push(`  Inicie sesión: curl -s -X POST ${url}/auth/login -H 'Content-Type: application/json' -d '{"username":"…","password":"…"}'`, '')
  process.stdout.write(lines.join('\n') + '\n')

  let closing = false
  const shutdown = (signal: string): void => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    const timer = setTimeout(() => { app.log.error('shutdown took over 10 s; exiting'); process.exit(1) }, 10_000)
    timer.unref()
    app.close().then(() => process.exit(0), (err: unknown) => { app.log.error(err); process.exit(1) })
  }
  process.on('SIGTERM', () => { shutdown('SIGTERM') })
  process.on('SIGINT', () => { shutdown('SIGINT') })
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`\n${err.message}\n\n`)
  } else {
    process.stderr.write(`\nNo se pudo arrancar el servicio: ${err instanceof Error ? err.message : String(err)}\n\n`)
  }
  process.exit(1)
})
