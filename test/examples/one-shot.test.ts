// The one-shot examples, run as their header says (`npm start` is the first): each exits 0, prints
// what it promises, and leaves nothing behind in the temporary directory (a run per day of `npx tsx
// examples/tracing.ts` must not pile up directories in /tmp).
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")
const scratch = mkdtempSync(join(tmpdir(), "one-shot-examples-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const run = (file: string, tmp: string) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", file], {
      cwd: root,
      // No studio, no provider: the offline path every header describes.
      env: { ...process.env, AI_PROVIDER: undefined, EFFECT_AGENT_STUDIO_URL: undefined, TMPDIR: tmp, TMP: tmp, TEMP: tmp },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000)
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("exit", (code) => {
      clearTimeout(timer)
      done({ code, stdout, stderr })
    })
  })

describe("one-shot examples", () => {
  it.each([
    ["examples/calculator.ts", /answer: \(3 \+ 5\) \* 2 = 16/],
    ["examples/effect-services.ts", /answer: Order A-7 is delayed[\s\S]*test run: done/],
    ["examples/tracing.ts", /execute_tool multiply[\s\S]*end success "16"/],
    ["examples/research-pipeline.ts", /Success in \d+ ms/],
    ["examples/studio-connect.ts", /events could not be sent \(is the studio running/]
  ] as const)("%s runs offline, says what it did, and leaves no temporary files", { timeout: 60_000 }, async (file, expected) => {
    const tmp = mkdtempSync(join(scratch, "tmp-"))
    const { code, stdout, stderr } = await run(file, tmp)
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(expected)
    // tsx keeps its transform cache in the temporary directory: that one is not the example's.
    expect(readdirSync(tmp).filter((name) => !name.startsWith("tsx-"))).toEqual([])
  })
})
