import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"

const cli = new URL("../../../src/studio/cli.ts", import.meta.url).pathname
const example = new URL("../../../examples/studio.ts", import.meta.url).pathname
const run = promisify(execFile)
// Absolute, so the CLI can run in another folder; the example's `effect-agent-dsl` imports resolve through the repo's tsconfig paths.
const tsx = new URL("../../../node_modules/tsx/dist/loader.mjs", import.meta.url).href
const env = { ...process.env, AI_PROVIDER: "", TSX_TSCONFIG_PATH: new URL("../../../tsconfig.json", import.meta.url).pathname }

let child: ChildProcess | undefined
let dir: string | undefined
afterEach(() => {
  child?.kill("SIGTERM")
  child = undefined
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

/** Starts the CLI and resolves with the URL it prints. */
const startCli = (args: ReadonlyArray<string>, cwd: string) =>
  new Promise<string>((resolve, reject) => {
    child = spawn(process.execPath, ["--import", tsx, cli, ...args], { cwd, env })
    let out = ""
    child.stdout!.on("data", (chunk) => {
      out += String(chunk)
      const url = /effect-agent studio: (\S+)/.exec(out)?.[1]
      if (url !== undefined) resolve(url)
    })
    child.stderr!.on("data", (chunk) => (out += String(chunk)))
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)))
  })

describe("effect-agent-studio (the bin)", () => {
  it("loads a TypeScript module, serves on 127.0.0.1 with a token, runs its agents offline and persists runs in the folder", async () => {
    dir = mkdtempSync(join(tmpdir(), "studio-cli-"))
    const url = await startCli([example, "--port", "0"], dir)
    const parsed = new URL(url)
    expect(parsed.hostname).toBe("127.0.0.1")
    const token = parsed.searchParams.get("token")!
    const auth = { authorization: `Bearer ${token}` }
    const agents = await (await fetch(new URL("/api/agents", url), { headers: auth })).json() as Array<{ id: string }>
    expect(agents.map((a) => a.id).sort()).toEqual(["calculator", "research", "teller"])
    const started = await fetch(new URL("/api/agents/calculator/runs", url), { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ input: "what is 6 * 7" }) })
    const { runId } = await started.json() as { runId: string }
    let status = "running"
    for (let i = 0; i < 100 && status === "running"; i++) {
      await new Promise((r) => setTimeout(r, 50))
      status = ((await (await fetch(new URL(`/api/runs/${runId}`, url), { headers: auth })).json()) as { summary: { status: string } }).summary.status
    }
    expect(status).toBe("completed")
    const sessions = await (await fetch(new URL("/api/sessions", url), { headers: auth })).json() as Array<{ id: string }>
    expect(sessions.map((s) => s.id)).toEqual(["demo-user"])
    // SIGTERM: the studio closes and writes its store.
    child!.removeAllListeners("exit")
    const exited = new Promise((resolve) => child!.once("exit", resolve))
    child!.kill("SIGTERM")
    await exited
    expect(readFileSync(join(dir, ".effect-agent-studio/runs.jsonl"), "utf8")).toContain(runId)
  }, 60_000)

  it("answers --help, and refuses a bad option (exit 2) or a missing module (exit 1) in one line", async () => {
    const help = await run(process.execPath, ["--import", tsx, cli, "--help"])
    expect(help.stdout).toContain("Usage: effect-agent-studio")
    const bad = await run(process.execPath, ["--import", tsx, cli, "--port", "abc"]).catch((e) => e)
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim().split("\n")).toEqual([expect.stringContaining("--port must be an integer")])
    const missing = await run(process.execPath, ["--import", tsx, cli, "no-such-file.ts"]).catch((e) => e)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("no such file")
  }, 60_000)
})
