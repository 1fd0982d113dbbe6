/**
 * `@google/genai` is an optional peer loaded lazily, like the other SDKs: importing the package's root
 * does not load it (neither through ESM nor `require`), building `gemini(...)` does. Runs in a fresh
 * `node` (tsx, on the sources) with a module hook that reports every URL it resolves.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "gemini-lazy-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))
const hook = join(work, "hook.mjs")
writeFileSync(hook, `export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("LOADED " + r.url + "\\n"); return r }\n`)
const register = join(work, "register.mjs")
writeFileSync(register, `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hook).href)})\n`)

const genaiLoaded = (body: string): boolean => {
  const entry = join(work, `case-${Math.random().toString(36).slice(2)}.mjs`)
  writeFileSync(
    entry,
    `const lib = await import(${JSON.stringify(pathToFileURL(join(root, "src/index.ts")).href)})
${body}
const { createRequire } = await import("node:module")
if (Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("/node_modules/@google/genai/"))) console.error("LOADED required:@google/genai")
console.log("done")
`
  )
  const result = spawnSync(process.execPath, ["--import", "tsx", "--import", pathToFileURL(register).href, entry], { cwd: root, encoding: "utf8" })
  if (result.stdout.trim() !== "done") throw new Error(`the program failed:\n${result.stdout}\n${result.stderr}`)
  return result.stderr.split("\n").some((line) => line.startsWith("LOADED ") && line.includes("@google/genai"))
}

describe("@google/genai is loaded lazily", () => {
  it("importing the root does not load it; building gemini(...) does", () => {
    expect(genaiLoaded("")).toBe(false)
    expect(genaiLoaded(`lib.gemini("gemini-2.5-flash", { apiKey: "k" })`)).toBe(true)
  })
})
