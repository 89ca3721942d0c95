import { parseDateTime, formatDateTime } from './core/time.js'
const tz='Europe/Madrid'
for (const s of ['2026-06-01T10:00:00Z','2026-06-01 12:00:00','2026-03-29 02:30:00','2026-10-25 02:30:00','2026-02-29 10:00:00','2024-02-29 10:00:00','2026-01-15 00:00:00','2026-13-01 10:00:00', '2026-06-01T10:00:00+02:00'])
 { const d = parseDateTime(s, tz); console.log(s, '=>', d?.toISOString(), d && formatDateTime(d,tz)) }
