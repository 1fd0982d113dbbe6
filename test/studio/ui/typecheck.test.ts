/**
 * The studio's browser modules are JavaScript with JSDoc types (served as they are, no build step);
 * `tsc -p src/studio/ui` checks them with the DOM library and `checkJs`, against the server's own API
 * types (`src/studio/server/api.ts`), so a change of the API that the page does not follow fails here.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))

it("type-checks the studio's browser modules against the server's API types", async () => {
  const result = await promisify(execFile)(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "src/studio/ui"], { cwd: root }).then(
    () => "",
    (error: { stdout?: string }) => error.stdout ?? String(error)
  )
  expect(result).toBe("")
}, 120_000)
