/**
 * `format: euros` (docs/administrator-guide.md "modules.yaml reference"):
 * a decimal that is an amount in euros. It checks nothing beyond the
 * decimal's own two places; it says what the number means, to the OpenAPI
 * document and to a client (the console shows `200,50 €`).
 */
import type { DecimalFormat } from './format.js'
import { eurosText } from '../../spanish-text.js'

export const euros: DecimalFormat = {
  type: 'decimal',
  description: 'Importe en euros',
  example: 90.5,
  importSample: 10.5,
  input: { type: 'text', inputMode: 'decimal', autocomplete: 'off', hint: 'Importe en euros, con coma decimal (200,50)' },
  filter: 'range',
  printed: eurosText,
}
