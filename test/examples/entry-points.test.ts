// The examples that are both a module (their tests import them) and a command (`npm run example:...`)
// start only when run as the main module. They must start from wherever the repository lies: a path
// with a space ("~/My Projects/"), a symlinked checkout (macOS's /tmp is one). A check that compares
// `import.meta.url` with `file://${process.argv[1]}` fails there (the URL percent-encodes, the argument
// does not; the URL is the real path, the argument the link), and the command exits 0 having done nothing.
import { type ChildProcess, spawn } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")
const scratch = mkdtempSync(join(tmpdir(), "examples entry "))
const children = new Set<ChildProcess>()
afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  rmSync(scratch, { recursive: true, force: true })
})

/** Runs `file` with tsx from `cwd` until `ready` matches its output (then stops it) or it exits. */
const run = (file: string, cwd: string, ready: RegExp, args: ReadonlyArray<string> = [], env: Record<string, string> = {}) =>
  new Promise<{ readonly output: string; readonly started: boolean }>((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", file, ...args], {
      cwd,
      env: { ...process.env, AI_PROVIDER: undefined, PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let output = ""
    let started = false
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000)
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      if (!started && ready.test(output)) {
        started = true
        child.kill("SIGTERM")
      }
    }
    child.stdout!.on("data", read)
    child.stderr!.on("data", read)
    child.on("exit", () => {
      clearTimeout(timer)
      children.delete(child)
      done({ output, started })
    })
  })

// The repository seen through a symlink whose path has a space.
const linked = join(scratch, "linked checkout")
symlinkSync(root, linked, "dir")

describe("example entry points start from any path", () => {
  // The servers share one entry check (stream-server's stands for approval-chat's and ag-ui-server's,
  // which are the same line); the ontology search's server and eval are the reference application's.
  it.each([
    ["examples/stream-server.ts", /streaming calculator on http:\/\/127\.0\.0\.1:\d+/, []],
    ["examples/ontology-search/server.ts", /ontology search on http:\/\/127\.0\.0\.1:\d+/, []],
    ["examples/ontology-search/eval.ts", /"slotPrecision":/, []]
  ] as const)("%s, run through a symlinked path with a space", { timeout: 60_000 }, async (file, ready, args) => {
    const { output, started } = await run(join(linked, file), linked, ready, args, { STORE_DIR: join(scratch, "approvals") })
    expect(started, output).toBe(true)
  })

  it("no example tells it runs as a command by comparing import.meta.url with a file:// string (what failed above)", () => {
    const files = (dir: string): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []))
    const naive = files(join(root, "examples")).filter((file) => /import\.meta\.url\s*===\s*`file:\/\//.test(readFileSync(file, "utf8")))
    expect(naive).toEqual([])
  })

  it("a copy in a real directory whose path has a space", { timeout: 60_000 }, async () => {
    const dir = join(scratch, "my agent")
    mkdirSync(dir)
    cpSync(join(root, "examples/stream-server.ts"), join(dir, "stream-server.ts"))
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir")
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "my-agent", private: true, type: "module" }))
    // The package's names, as the repo's tsconfig maps them, to the sources by absolute path.
    const tsconfig = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8"))
    const paths = Object.fromEntries(Object.entries(tsconfig.compilerOptions.paths as Record<string, ReadonlyArray<string>>).map(([name, [target]]) => [name, [resolve(root, target!)]]))
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { ...tsconfig.compilerOptions, paths } }))
    const { output, started } = await run(join(dir, "stream-server.ts"), dir, /streaming calculator on http:\/\/127\.0\.0\.1:\d+/)
    expect(started, output).toBe(true)
  })
})
