/**
 * The package as users get it: `npm pack` (which builds dist/ through `prepack`), the tarball installed
 * into a fresh consumer project next to `effect`, TypeScript 5.9 and vitest — and nothing else, so
 * fast-check is absent. The consumer program is type-checked with TypeScript 5.x (strict, NodeNext,
 * without `exactOptionalPropertyTypes` or `allowImportingTsExtensions`; our declarations also under
 * `skipLibCheck: false`) and with
 * `moduleResolution: "bundler"`, run with plain `node`, imported from `.mjs` and required from `.cjs`;
 * a consumer vitest test uses `./testing`; the trace renderer runs as a bin; publint and
 * arethetypeswrong check the tarball; and the messages of the type errors users meet most are asserted.
 *
 * Installs come from the npm cache that `npm ci` filled (`--prefer-offline`); the registry is asked only
 * for what is missing there. The tarball comes from `packed.ts`, shared with the starter's test.
 */
import type { ExecFileSyncOptions } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { install, packedTarball, root, run as runIn, version } from "./packed.ts"

const require = createRequire(import.meta.url)

let work = ""
let consumer = ""
let tarball = ""

const run = (command: string, args: ReadonlyArray<string>, options: ExecFileSyncOptions = {}): string =>
  runIn(command, args, { cwd: consumer, ...options })
const tsc5 = (project: string) => run(process.execPath, [join(consumer, "node_modules/typescript/bin/tsc"), "-p", project])

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "effect-agent-dsl-package-"))
  consumer = join(work, "consumer")
  cpSync(join(import.meta.dirname, "fixture"), consumer, { recursive: true })
  tarball = await packedTarball() // shared with starter.test.ts: one `npm pack` per content
  install(consumer, [
    tarball,
    `effect@${version("effect")}`,
    `typescript@${version("typescript5")}`,
    `vitest@${version("vitest")}`,
    `@types/node@${version("@types/node")}`
  ])
}, 240_000)

afterAll(() => {
  if (work !== "") rmSync(work, { recursive: true, force: true })
}, 120_000)

describe("the packed package", { timeout: 120_000 }, () => {
  it("ships built JavaScript, declarations and maps, not tests", () => {
    const listing = run("tar", ["-tzf", tarball])
    expect(listing).toContain("package/dist/index.js")
    expect(listing).toContain("package/dist/index.d.ts")
    expect(listing).toContain("package/dist/index.js.map")
    expect(listing).toContain("package/dist/testing/arbitraries.js")
    expect(listing).toContain("package/dist/web/index.js")
    // The JavaScript is bundled per entry point with shared chunks; declarations stay file by file.
    expect(listing).toMatch(/package\/dist\/chunks\/chunk-\w+\.js\n/)
    expect(listing).toContain("package/dist/dsl/agent.d.ts")
    expect(listing).not.toContain("package/dist/dsl/agent.js")
    expect(listing).not.toMatch(/package\/test\//)
    const declarations = run("tar", ["-xzOf", tarball, "package/dist/index.d.ts"])
    expect(declarations).not.toMatch(/from "\.[^"]*\.ts"/)
  })

  it("also builds with the TypeScript the repo type-checks with (7.x)", async () => {
    const out = join(root, "node_modules/.cache/effect-agent-dsl-tsc7")
    run(process.execPath, [join(root, "scripts/build.mjs"), "--compiler", "tsc7", "--out-dir", out], { cwd: root })
    expect(readFileSync(join(out, "index.d.ts"), "utf8")).not.toMatch(/from "\.[^"]*\.ts"/)
    const built = await import(pathToFileURL(join(out, "index.js")).href)
    expect(typeof built.agent).toBe("function")
    rmSync(out, { recursive: true, force: true })
  })

  it("type-checks a consumer with TypeScript 5 (strict, NodeNext) and runs it with plain node", () => {
    expect(run(process.execPath, [join(consumer, "node_modules/typescript/bin/tsc"), "-v"])).toMatch(/^Version 5\./)
    tsc5("tsconfig.json")
    const output = JSON.parse(run(process.execPath, ["out/main.js"]))
    expect(output).toEqual({ viaPromise: "3", viaEffect: "hi", failed: "ToolNotAllowed", viaDurable: "3" })
  })

  it("type-checks with moduleResolution bundler", () => {
    tsc5("tsconfig.bundler.json")
  })

  /** The errors `project` reports in our declarations (a dependency's own are not ours to fix). */
  const errorsInOurDeclarations = (project: string): ReadonlyArray<string> => {
    let output = ""
    try {
      tsc5(project)
    } catch (error) {
      output = (error as Error).message
    }
    return output.split("\n").filter((line) => line.includes("effect-agent-dsl/"))
  }

  it("has declarations without errors of their own under skipLibCheck: false", () => {
    // Dependencies' declarations may need DOM types a Node project does not load; ours must not.
    expect(errorsInOurDeclarations("tsconfig.libcheck.json")).toEqual([])
  })

  it("has root and /web declarations that need no Node types (an edge or browser project)", () => {
    expect(errorsInOurDeclarations("tsconfig.nodeless.json")).toEqual([])
  })

  it("is importable from plain .mjs (one class across entry points) and requirable from .cjs", () => {
    expect(run(process.execPath, ["plain.mjs"]).trim()).toBe("done")
    expect(run(process.execPath, ["plain.cjs"]).trim()).toBe("from require")
  })

  it("names the SDK to install when a provider is built without it (the SDKs are optional peers)", () => {
    const messages: ReadonlyArray<string> = JSON.parse(run(process.execPath, ["missing-sdk.mjs"]))
    expect(messages).toHaveLength(3)
    expect(messages[0]).toMatch(/openai model "gpt-4o-mini".*the package "openai" is not installed.*npm install openai/)
    expect(messages[1]).toMatch(/the package "@anthropic-ai\/sdk" is not installed.*npm install @anthropic-ai\/sdk/)
    expect(messages[2]).toMatch(/the package "ollama" is not installed.*npm install ollama/)
  })

  it("runs a consumer vitest test that uses ./testing without fast-check installed", () => {
    expect(() => require.resolve("fast-check", { paths: [consumer] })).toThrow()
    const output = run(process.execPath, [join(consumer, "node_modules/vitest/vitest.mjs"), "run"], { env: { ...process.env, CI: "true" } })
    expect(output).toMatch(/2 passed/)
  })

  it("renders a trace through the bin, as `npx effect-agent-trace` does", () => {
    const trace = join(work, "trace.jsonl")
    writeFileSync(trace, `${JSON.stringify({ v: 1, ts: 0, run: "run_r1", agent: "greeter", event: "RunStart", input: "hi" })}\n`)
    const output = run(join(consumer, "node_modules/.bin/effect-agent-trace"), [trace])
    expect(output).toContain("greeter")
  })

  it("passes publint and arethetypeswrong (ESM-only profile)", () => {
    run(process.execPath, [join(root, "node_modules/publint/src/cli.js"), "--strict", tarball], { cwd: root })
    run(process.execPath, [join(root, "node_modules/@arethetypeswrong/cli/dist/index.js"), "--profile", "esm-only", tarball], { cwd: root })
  })
})

describe("the type errors users meet most, as TypeScript 5 reports them", { timeout: 120_000 }, () => {
  let diagnostics: ReadonlyArray<string> = []
  const source = () => readFileSync(join(consumer, "src/type-errors.ts"), "utf8").split("\n")
  /** The messages reported on the line marked `// LABEL` in the fixture. */
  const at = (label: string): string => {
    const line = source().findIndex((l) => l.endsWith(`// ${label}`)) + 1
    return diagnostics.filter((d) => d.startsWith(`src/type-errors.ts(${line},`)).join("\n")
  }

  beforeAll(() => {
    try {
      tsc5("tsconfig.errors.json")
    } catch (error) {
      diagnostics = String((error as Error).message).split(/\n(?=src\/)/)
    }
  }, 60_000)

  it("an unregistered tool is named, with the fix", () => {
    expect(at("UNREGISTERED")).toContain("Property 'shout' does not exist")
    expect(at("UNREGISTERED")).toContain("only tools registered with .tools(...) before .skills(...) have handles here")
  })

  it("another agent's handle is reported at the handle", () => {
    expect(at("FOREIGN")).toContain("the handle of 'shout' belongs to agent 'other', not 'calc'")
  })

  it("a raw tool says to take handles from .skills(handles => ...)", () => {
    expect(at("RAW")).toContain("'add' is a tool, not a handle: register it with .tools({ add }) and take its handle from .skills(({ add }) => [skill(...).tools(add)])")
  })

  it(".skills before .tools says the order matters", () => {
    expect(at("ORDER")).toContain("Property 'add' does not exist")
    expect(at("ORDER")).toContain("before .skills(...)")
  })

  it("a skill made only of another agent's handles names the property that differs", () => {
    expect(at("FOREIGN_ONLY")).toContain("~uses handles of agent")
    expect(at("FOREIGN_ONLY")).toContain(`'"other"' is not assignable to type '"calc"'`)
  })

  it("run without a model says to call .model(...)", () => {
    expect(at("NO_MODEL")).toContain("call .model(...) before .run(...)")
  })

  it("an empty skill list and a forced tool the agent lacks are errors (they need NoInfer: TypeScript 5.4)", () => {
    expect(at("NO_SKILLS")).not.toBe("")
    expect(at("TOOL_CHOICE")).not.toBe("")
  })

  it("a pipeline whose stages do not line up names the stage", () => {
    expect(at("PIPELINE")).toContain("stage 1 takes another input type than stage 0 outputs")
  })

  it("a branch without a case names the missing tag", () => {
    expect(at("BRANCH_MISSING")).toContain("Property 'Question' is missing")
  })

  it("a handoff to an agent of another output or input type says what to do", () => {
    expect(at("HANDOFF_OUTPUT")).toContain("this skill answers another type than the agent's output: its .implementedBy(...) function, its .output(...) Schema and its handoff targets answer the agent's output type")
    expect(at("HANDOFF_INPUT")).toContain("this skill takes another input than the agent's: its .implementedBy(...) function and its handoff targets take the agent's input type")
  })

  it("a composite whose member has no model says to call .model(...)", () => {
    expect(at("COMPOSITE_NO_MODEL")).toContain("a member has no model: call .model(...) on every member agent")
  })

  it("a loop body must output what it takes", () => {
    expect(at("LOOP")).toContain("a loop's body must output the same type it takes")
  })

  it("run names the service a tool still requires", () => {
    expect(at("MISSING_SERVICE")).toContain("provide the missing services with .provide(layer) before .run(...)")
    expect(at("MISSING_SERVICE")).toContain("Database")
  })
})
