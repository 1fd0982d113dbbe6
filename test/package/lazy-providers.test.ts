/**
 * Cold start (issue #20): importing the package's root loads no provider SDK, no MCP SDK, neither
 * Effect's barrel nor a sub-barrel, and none of the Effect modules only a rarely used feature needs;
 * building a provider loads its own SDK then, and only that one. Each case runs in a fresh `node` (tsx,
 * on the sources) with a module hook that reports every URL it resolves.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "lazy-providers-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const hook = join(work, "hook.mjs")
writeFileSync(
  hook,
  `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  process.stderr.write("LOADED " + resolved.url + "\\n")
  return resolved
}
`
)
const register = join(work, "register.mjs")
writeFileSync(register, `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hook).href)})\n`)

/** What a program that imports the root export as `lib`, then runs `body`, loads (resolved URLs). */
const loadedBy = (name: string, body: string): ReadonlyArray<string> => {
  const entry = join(work, `${name}.mjs`)
  writeFileSync(entry, `const lib = await import(${JSON.stringify(pathToFileURL(join(root, "src/index.ts")).href)})\n${body}\nconsole.log("done")\n`)
  const result = spawnSync(process.execPath, ["--import", "tsx", "--import", pathToFileURL(register).href, entry], { cwd: root, encoding: "utf8" })
  if (result.stdout.trim() !== "done") throw new Error(`the program failed:\n${result.stdout}\n${result.stderr}`)
  return result.stderr.split("\n").filter((line) => line.startsWith("LOADED ")).map((line) => line.slice(7))
}
// The SDKs load through `require` when a provider is built: the hook sees ESM resolutions only, so
// a required SDK is detected from inside the program instead.
const required = (names: ReadonlyArray<string>) =>
  `const { createRequire } = await import("node:module")
const cache = createRequire(import.meta.url).cache
const keys = Object.keys(cache)
console.error(${JSON.stringify(names)}.filter((n) => keys.some((k) => k.includes("/node_modules/" + n + "/"))).map((n) => "LOADED required:" + n).join("\\n"))`

const heavy = {
  openai: "/node_modules/openai/",
  "@anthropic-ai/sdk": "/node_modules/@anthropic-ai/sdk/",
  ollama: "/node_modules/ollama/",
  "@modelcontextprotocol/sdk": "/node_modules/@modelcontextprotocol/sdk/",
  "effect/ai barrel (rpc, workers, sql)": "/node_modules/effect/dist/rpc/"
}
const sdkNames = ["openai", "@anthropic-ai/sdk", "ollama"]
const loadedHeavy = (urls: ReadonlyArray<string>) =>
  Object.entries(heavy).filter(([, part]) => urls.some((url) => url.includes(part))).map(([name]) => name)
    .concat(urls.filter((url) => url.startsWith("required:")).map((url) => url.slice(9)))

describe("cold start: what the root export loads", () => {
  it("importing the root loads no provider SDK, no MCP SDK and not the effect/ai barrel", () => {
    expect(loadedHeavy(loadedBy("root", required(sdkNames)))).toEqual([])
  })

  it("importing the root loads neither Effect's barrel nor the modules of fromEnv, layers, fileKnowledge and streaming", () => {
    const effect = loadedBy("root-effect", "").filter((url) => url.includes("/node_modules/effect/dist/")).map((url) => url.replace(/^.*\/node_modules\/effect\/dist\//, ""))
    expect(effect.length).toBeGreaterThan(0)
    // Each of these is loaded (through `require`, invisible to the hook) by the feature that needs it.
    const lazy = ["index.js", "Config.js", "ConfigProvider.js", "FileSystem.js", "Stream.js", "Queue.js"]
    expect(effect.filter((file) => lazy.includes(file))).toEqual([])
  })

  it("src imports Effect's modules, not its barrel (`node scripts/effect-direct-imports.mjs` fixes it)", () => {
    const check = spawnSync(process.execPath, [join(root, "scripts/effect-direct-imports.mjs"), "--check"], { cwd: root, encoding: "utf8" })
    expect(check.stderr).toBe("")
    expect(check.status).toBe(0)
  })

  it("building an openai client loads the openai SDK, and no other", () => {
    expect(loadedHeavy(loadedBy("openai", `lib.openai("gpt-4o-mini", { apiKey: "k" })\n${required(sdkNames)}`))).toEqual(["openai"])
  })

  it("building an anthropic client loads @anthropic-ai/sdk, and no other", () => {
    expect(loadedHeavy(loadedBy("anthropic", `lib.anthropic("claude-sonnet-4-6", { apiKey: "k" })\n${required(sdkNames)}`))).toEqual(["@anthropic-ai/sdk"])
  })

  it("an openai client without any key still fails when it is built (as before the SDK was lazy)", () => {
    const urls = loadedBy(
      "openai-no-key",
      `delete process.env.OPENAI_API_KEY\ntry { lib.openai("gpt-4o-mini"); console.log("built") } catch (e) { if (e._tag !== "AgentConfigError") throw e }`
    )
    expect(urls.length).toBeGreaterThan(0)
  })
})
