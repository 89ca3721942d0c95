/**
 * `npm run verificar-documento -- --clave <key> <code>`: checks a printed
 * record's verification code offline, with the deployment's published
 * Ed25519 public key and nothing else: no database, no network
 * (docs/user-guide.md "Printed records"). It says which record, version
 * and seal the key vouches for; whether that version still stands, and
 * whether a newer one exists, only the service knows (POST /documentos/verificar).
 */
import { existsSync, readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { readCode, signedMessage } from '../records/documents/document-code.js'
import { verifyWithPublicKey } from '../records/integrity/checkpoint-format.js'

const HELP = `npm run verificar-documento -- --clave <public key> <code>
(in the image: node dist/bin/verificar-documento.js …)

Checks the verification code printed under a record's QR code (ID.VERSION.SIGNATURE;
spaces and line breaks are ignored) against the deployment's Ed25519 public key,
offline. --clave takes the key (base64, as npm run integrity-key -- --publica
prints it) or a file holding it. Whether the version is still the newest, and
whether the record still holds it, only the service says: POST /documentos/verificar.
Exit status: 0 valid; 1 NOT valid (not signed by this key, or altered);
2 not a code, or no key given.
`

function keyOf (value: string): string {
  const text = existsSync(value) ? readFileSync(value, 'utf8') : value
  return text.trim()
}

function main (): number {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' }, clave: { type: 'string' } } })
  if (values.help === true) { process.stdout.write(HELP); return 0 }
  if (values.clave === undefined || positionals.length === 0) {
    process.stderr.write(`give the public key and the code.\n\n${HELP}`)
    return 2
  }
  const key = keyOf(values.clave)
  if (Buffer.from(key, 'base64').length !== 32) {
    process.stderr.write('--clave is not an Ed25519 public key (32 bytes, base64): print it with npm run integrity-key -- --publica\n')
    return 2
  }
  // A code copied from the paper's text may come in several arguments, one per line.
  const code = readCode(positionals.join(''))
  if (code === undefined) {
    process.stderr.write('not a verification code: expected ID.VERSION.SIGNATURE, as printed under the QR code\n')
    return 2
  }
  if (!verifyWithPublicKey(key, signedMessage(code), code.signature)) {
    process.stdout.write(`NOT valid: this code was not signed by this key, or it was altered (it names ${code.id}, version ${code.version})\n`)
    return 1
  }
  process.stdout.write(`valid: ${code.id}, version ${code.version}, seal (SHA-256) ${code.hash}, signed by this key\n`)
  return 0
}

process.exitCode = main()
