/**
 * `Protección de datos` (docs/user-guide.md "Personal data", "Console"):
 * the data-protection officer's screen, shown only to a user whose GET /me
 * answers `proteccion_datos: true` (the API answers 403 to anyone else):
 * the retention review and its decisions (retention-review.tsx), a
 * person's data by DNI (interested-party.tsx), and the decisions taken
 * (data-protection-decisions.tsx).
 */
import { useState } from 'preact/hooks'
import type { ModuleInfo } from './modules.js'
import { RetentionReview } from './retention-review.js'
import { InterestedParty } from './interested-party.js'
import { DataProtectionDecisions } from './data-protection-decisions.js'

/** The console's own screens start with `_`, which no module path may (core/registry/schema.ts). */
export const DATA_PROTECTION_PATH = '_proteccion_datos'

export function DataProtectionScreen ({ modules }: { modules: ModuleInfo[] }) {
  const [decided, setDecided] = useState(0)
  return (
    <>
      <h1>Protección de datos</h1>
      <RetentionReview modules={modules} onDecided={() => setDecided((n) => n + 1)} />
      <InterestedParty modules={modules} />
      <DataProtectionDecisions modules={modules} version={decided} />
    </>
  )
}
