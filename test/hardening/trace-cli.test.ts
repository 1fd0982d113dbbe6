/**
 * Issue #28 item 13: the `effect-agent-trace` command, spawned as users run it: `--help` and
 * `--version` answer instead of reading a file of that name, and mistakes end with a message saying
 * what to pass (and a non-zero exit code), never a stack trace.
 */
import { execFile } from "node:child_process"
import { mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import packageJson from "../../package.json" with { type: "json" }

const cli = (args: ReadonlyArray<string>, stdin?: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, ["--import", "tsx", "src/cli/render-trace.ts", ...args], { encoding: "utf8" }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
    if (stdin !== undefined) child.stdin?.end(stdin)
    else child.stdin?.end()
  })

const line = JSON.stringify({ v: 1, ts: 0, run: "r1", agent: "a", event: "RunStart", input: "hi" })

describe("effect-agent-trace (item 13)", () => {
  it("--help prints the usage and exits 0", async () => {
    const [long, short] = await Promise.all([cli(["--help"]), cli(["-h"])])
    expect(long.code).toBe(0)
    expect(long.stdout).toMatch(/Usage: effect-agent-trace/)
    expect(long.stdout).toMatch(/--version/)
    expect(long.stderr).not.toMatch(/ENOENT/)
    expect(short.stdout).toBe(long.stdout)
  })

  it("--version prints the package's version", async () => {
    const result = await cli(["--version"])
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe(packageJson.version)
  })

  it("a missing file is reported by name with what to pass, no stack trace", async () => {
    const result = await cli(["no-such-trace.jsonl"])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/cannot read "no-such-trace.jsonl"/)
    expect(result.stderr).toMatch(/--help/)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it("an unknown option is refused with the usage hint", async () => {
    const result = await cli(["--colour"])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/--colour/)
    expect(result.stderr).toMatch(/--help/)
  })

  it("two files are refused", async () => {
    const result = await cli(["a.jsonl", "b.jsonl"])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/one trace file/)
  })

  it("still renders a file, and standard input with -", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "trace-cli-")), "t.jsonl")
    await writeFile(path, `${line}\n`)
    const [file, stdin] = await Promise.all([cli([path]), cli(["-"], `${line}\n`)])
    expect(file.code).toBe(0)
    expect(file.stdout).toContain("agent a")
    expect(stdin.stdout).toBe(file.stdout)
  })
}, 30_000)
