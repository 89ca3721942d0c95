// The browser tests open the console: build it first when its bundle is missing or stale (console/build.ts).
import { ensureConsoleBuilt } from '../../console/build.js'

export default async function setup (): Promise<void> {
  await ensureConsoleBuilt()
}
