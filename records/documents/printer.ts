/**
 * Prints one record (docs/user-guide.md "Printed records"): its printed
 * content (printed-record.ts), the code signed with the deployment's key
 * (document-code.ts), laid out as a PDF (pdf-document.ts). The records
 * service has read it and logged the read; the printer does no I/O. It
 * also prints the data-protection officer's search of a person's records
 * (person-report.ts; docs/user-guide.md "Personal data"), which the
 * search has logged.
 */
import type { Caller } from '../../core/access.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { dateText } from '../../core/spanish-text.js'
import { formatDateTime } from '../../core/time.js'
import type { PersonAnswer } from '../data-protection/interested-party.js'
import type { ApiRecord } from '../records-service.js'
import { makeCode } from './document-code.js'
import { renderPdf } from './pdf-document.js'
import type { DocumentStyle } from './pdf-page.js'
import { renderPersonReport } from './person-report.js'
import { printedRecord } from './printed-record.js'

export interface PrintedDocument {
  readonly pdf: Buffer
  /** `DEN-2026-00001-v3.pdf`, `interesado-2026-11-30.pdf` */
  readonly filename: string
}

export class Printer {
  constructor (
    private readonly sign: (message: Buffer) => Buffer,
    private readonly style: DocumentStyle,
    private readonly timeZone: string,
  ) {}

  async print (mod: ModuleDef, record: ApiRecord, caller: Caller, now = new Date()): Promise<PrintedDocument> {
    const rec = printedRecord(mod, record)
    const code = makeCode({ id: rec.id, version: rec.version, hash: rec.hash }, this.sign)
    const pdf = await renderPdf(rec, { code, printedAt: dateText(formatDateTime(now, this.timeZone)), printedBy: caller.username }, this.style)
    return { pdf, filename: `${rec.id}-v${rec.version}.pdf` }
  }

  /** A person's search as the officer's report; `dni` as the search read it (personDni), the modules by name for their labels. */
  async printPerson (modules: ReadonlyMap<string, ModuleDef>, answer: PersonAnswer, dni: string, caller: Caller, now = new Date()): Promise<PrintedDocument> {
    const at = formatDateTime(now, this.timeZone)
    const pdf = await renderPersonReport(answer, dni, modules, { printedAt: dateText(at), printedBy: caller.username }, this.style)
    return { pdf, filename: `interesado-${at.slice(0, 10)}.pdf` }
  }
}
