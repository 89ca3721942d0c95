/**
 * `npm run users -- <command>` (`node dist/bin/users.js <command>` in the
 * image): user management with the database alone, no HTTP (docs/administrator-guide.md "User management from the command line") —
 * the way back in when every superadmin password is lost. Writes go
 * through the records layer as the service itself (records/users/
 * user-admin.ts); the revocation epoch they raise in the database makes
 * running instances drop their cache, and with REDIS_URL set (and Redis
 * reachable) the cache is updated at once too.
 */
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { ConfigError } from '../core/errors.js'
import { describeRedis } from '../core/redis-config.js'
import type { EmbeddedDatabase } from '../db/embedded.js'
import { withRecords, type RecordsSession } from './lib/records-session.js'
import { UserAdmin, UserAdminError, generatePassword } from '../records/users/user-admin.js'

const HELP: Record<string, string> = {
  '': `npm run users -- <command> [options]     (in the image: node dist/bin/users.js <command>)

User management with the database alone: no HTTP, no running service, no
Redis needed. Uses DATABASE_URL (or the embedded database under DATA_DIR,
which serves one process: stop npm start first), ENCRYPTION_KEY and
MODULES_FILE like the service. Every change is recorded in the user's
history as SISTEMA, and raises the revocation epoch so that running
instances drop their cache (within 2 s; at once when REDIS_URL is set).

Commands:
  list                          the users: username, role, active, open sessions
  create                        a new user (--username, --nombre, --rol)
  deactivate <username>         deactivates the user and revokes every session for good
  activate <username>           reactivates the user (old tokens stay revoked)
  set-role <username> <rol>     changes the role
  reset-password <username>     sets a new password and revokes every session
  create-superadmin             a new superadmin: recovery when every superadmin password is lost
  desbloquear <username>        lifts the user's login lock-out (needs REDIS_URL, as the service)

npm run users -- <command> --help describes each one.
Exit status: 0 done; 1 refused or failed (the message says why and what to do); 2 wrong usage.
`,
  list: `npm run users -- list

Lists the users that are not deleted: username, role, active or not, open
sessions (unexpired, not revoked), id.
`,
  create: `npm run users -- create --username <u> --nombre <name> --rol <role> [--email <e>] [--password <p>]

Creates a user. Without --password a random one is generated and printed
once. The password must have at least 10 characters, not be a documented
placeholder (docs/user-guide.md, "Authentication and roles") nor the username.
`,
  deactivate: `npm run users -- deactivate <username>

Sets activo to false and revokes every session of the user: their tokens
stop working on every instance and never work again, also after
reactivation.
`,
  activate: `npm run users -- activate <username>

Sets activo to true. The user logs in again; tokens revoked by the
deactivation stay revoked.
`,
  'set-role': `npm run users -- set-role <username> <rol>

Changes the user's role; it applies from the next request on every
instance. Roles: those of usuarios.rol in modules.yaml.
`,
  'reset-password': `npm run users -- reset-password <username> [--password <p>]

Sets a new password (random and printed once without --password) and
revokes every session of the user. Works on any user, a superadmin
included: with it an operator who lost every superadmin password gets
back in.
`,
  'create-superadmin': `npm run users -- create-superadmin --username <u> [--nombre <name>] [--password <p>]

Creates a new superadmin (recovery when every superadmin password is lost
and no superadmin should be reset). Without --password a random one is
generated and printed once.
`,
  desbloquear: `npm run users -- desbloquear <username>

Lifts every login lock-out of the user (docs/user-guide.md "Rate limits"):
forgets their failed logins from every address and device, as
POST /usuarios/{id}/desbloquear does; they log in at once. The failures
live where the service keeps them: with REDIS_URL, in Redis, which this
command must reach. Without REDIS_URL they live in the running service's
memory, which no other process reaches: lift the lock in the console
(Administrar usuarios, Desbloquear) or restart the service, which begins
with none.
`,
}

export interface UsersCliOptions {
  env?: Record<string, string | undefined>
  /** An embedded database already running in this process (tests). */
  embedded?: EmbeddedDatabase
  out?: (text: string) => void
  err?: (text: string) => void
}

class Usage extends Error {}

/** Runs one command; returns the exit status. */
export async function runUsers (argv: readonly string[], opts: UsersCliOptions = {}): Promise<number> {
  const out = opts.out ?? ((t: string) => { process.stdout.write(t) })
  const err = opts.err ?? ((t: string) => { process.stderr.write(t) })
  const command = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : ''
  try {
    const { values, positionals } = parseArgs({
      args: argv.slice(command === '' ? 0 : 1),
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        username: { type: 'string' },
        nombre: { type: 'string' },
        rol: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
      },
    })
    if (HELP[command] === undefined) throw new Usage(`unknown command "${command}"`)
    if (values.help === true || command === '') {
      (command === '' && values.help !== true ? err : out)(HELP[command]!)
      return command === '' && values.help !== true ? 2 : 0
    }
    return await withAdmin(opts, err, async (admin, { config, attemptLogs }) => {
      const positional = (n: number, name: string): string => {
        if (positionals.length !== n) throw new Usage(`${command} takes ${name}`)
        return positionals[n - 1]!
      }
      const password = (): { value: string, generated: boolean } =>
        values.password !== undefined ? { value: values.password, generated: false } : { value: generatePassword(), generated: true }
      const tellPassword = (p: { value: string, generated: boolean }): void => {
        if (p.generated) out(`Generated password (shown only this once): ${p.value}\n`)
      }
      switch (command) {
        case 'list': {
          positional(0, 'no arguments')
          const lines = await admin.list()
          const rows = [['username', 'role', 'active', 'sessions', 'id'], ...lines.map((u) => [u.username, u.rol, u.activo ? 'yes' : 'no', String(u.sesiones), u.id])]
          const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
          out(rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n')
          return 0
        }
        case 'create':
        case 'create-superadmin': {
          positional(0, 'options only (see --help)')
          const rol = command === 'create' ? values.rol : admin.superRole
          const nombre = values.nombre ?? (command === 'create-superadmin' ? 'Superadministrador' : undefined)
          const missing = [values.username === undefined && '--username', nombre === undefined && '--nombre', rol === undefined && '--rol'].filter((m) => m !== false)
          if (missing.length > 0) throw new Usage(`${command} needs ${missing.join(', ')}`)
          const p = password()
          const row = await admin.create({ username: values.username!, nombre: nombre!, rol: rol!, password: p.value, ...(values.email !== undefined && { email: values.email }) })
          out(`User "${values.username!}" created with role ${rol!} (${String(row._id)}).\n`)
          tellPassword(p)
          return 0
        }
        case 'deactivate':
        case 'activate': {
          const username = positional(1, 'one username')
          await admin.setActive(username, command === 'activate')
          out(command === 'activate'
            ? `User "${username}" activated (tokens revoked earlier stay revoked).\n`
            : `User "${username}" deactivated; every session of theirs is revoked.\n`)
          return 0
        }
        case 'set-role': {
          if (positionals.length !== 2) throw new Usage('set-role takes a username and a role')
          const [username, rol] = positionals as [string, string]
          await admin.setRole(username, rol)
          out(`User "${username}": role ${rol}, from the next request on every instance.\n`)
          return 0
        }
        case 'desbloquear': {
          const username = positional(1, 'one username')
          if (await admin.find(username) === null) throw new UserAdminError(`no user named "${username}" (deleted users do not count); see: npm run users -- list`)
          if (attemptLogs === undefined) {
            throw new UserAdminError(config.redis === undefined
              ? 'without REDIS_URL or REDIS_SENTINELS the login lock-out lives in the running service\'s memory, which this command cannot reach: lift it in the console (Administrar usuarios, Desbloquear; POST /usuarios/{id}/desbloquear) or restart the service, which begins with no lock'
              : `${describeRedis(config.redis)} does not answer, and the login lock-out lives there: run the command again once Redis answers (redis-cli -u "$REDIS_URL" ping; with Sentinels, redis-cli -h <sentinel> -p 26379 sentinel get-master-addr-by-name <name>)`)
          }
          const logs = await admin.unlock(username, attemptLogs)
          out(`User "${username}": login lock-out lifted on every address and device (${logs === 0 ? 'no failures were recorded' : `${logs} logs of failures forgotten`}).\n`)
          return 0
        }
        case 'reset-password': {
          const username = positional(1, 'one username')
          const p = password()
          await admin.resetPassword(username, p.value)
          out(`Password of "${username}" changed; every session of theirs is revoked.\n`)
          tellPassword(p)
          return 0
        }
      }
      throw new Usage(`unknown command "${command}"`)
    })
  } catch (e) {
    if (e instanceof Usage || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true) {
      err(`${(e as Error).message}\n\n${HELP[HELP[command] === undefined ? '' : command]!}`)
      return 2
    }
    err(`${e instanceof UserAdminError || e instanceof ConfigError ? e.message : `failed: ${e instanceof Error ? e.message : String(e)}`}\n`)
    return 1
  }
}

/** Opens the database (and Redis when configured and reachable), hands over a UserAdmin and the session, closes everything. */
async function withAdmin (opts: UsersCliOptions, err: (t: string) => void, fn: (admin: UserAdmin, session: RecordsSession) => Promise<number>): Promise<number> {
  return withRecords(opts, err, async (session) => fn(new UserAdmin(session.em, session.records, session.registry), session))
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runUsers(process.argv.slice(2)).then((code) => process.exit(code), (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  })
}
