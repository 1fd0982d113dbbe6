// The command (`npm run example:search`): AI_PROVIDER set but empty or blank means no provider, so the
// scripted stand-in answers instead of the environment being refused.
import { spawn } from "node:child_process"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../../..")

/** Runs main.ts with tsx on one question, as `npm run example:search -- "<question>"` does. */
const runMain = (env: Record<string, string>, question: string) =>
  new Promise<{ readonly code: number | null; readonly output: string }>((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", "examples/ontology-search/main.ts", question], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      done({ code, output })
    })
  })

describe("example:search", () => {
  // One run (a process costs seconds); a blank value takes the same test in main.ts, and server.test.ts
  // starts the server in-process with both an empty and a blank AI_PROVIDER.
  it("AI_PROVIDER= (set but empty) runs on the scripted stand-in", { timeout: 40_000 }, async () => {
    const { code, output } = await runMain({ AI_PROVIDER: "" }, "motoway maps")
    expect(output).toContain("model: scripted stand-in")
    expect(output).toContain("corrected filters.roadTypes: motoway → motorway (fuzzy)")
    expect(code, output).toBe(0)
  })
})
