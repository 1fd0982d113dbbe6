import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"
import { esModuleExports, tsxLoaderUrl } from "../../../src/studio/load-module.ts"

const run = promisify(execFile)
const repo = new URL("../../../", import.meta.url).pathname
let dir: string | undefined
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

/** Imports tsx's loader as `loadModule` does after a plain import failed on the `.ts` extension, then the module, under a plain node (no loader of its own). */
const loadUnderPlainNode = async (folder: string, packageJson: string | undefined) => {
  if (packageJson !== undefined) writeFileSync(join(folder, "package.json"), packageJson)
  const module = join(folder, "agents.ts")
  writeFileSync(module, "export const answer: number = 42 as number\n")
  const script = `await import(${JSON.stringify(tsxLoaderUrl(repo))}); const m = await import(${JSON.stringify(`${pathToFileURL(module).href}?studio`)}); console.log(m.answer ?? m.default?.answer)`
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: folder, env: { ...process.env, NODE_OPTIONS: "" } })
  return stdout.trim()
}

describe("the studio's TypeScript loader (tsx as the project has it)", () => {
  it("is tsx's loader, its ESM build, read from tsx's exports", () => {
    expect(tsxLoaderUrl(repo)).toMatch(/^file:.*\/node_modules\/tsx\/dist\/loader\.mjs$/)
  })

  it("loads a TypeScript module of an ES module project under a plain node", async () => {
    dir = mkdtempSync(join(tmpdir(), "studio-tsx-"))
    expect(await loadUnderPlainNode(dir, '{ "type": "module" }')).toBe("42")
  }, 30_000)

  it("loads a TypeScript module of a folder without \"type\": \"module\" (CommonJS) under a plain node", async () => {
    dir = mkdtempSync(join(tmpdir(), "studio-tsx-"))
    expect(await loadUnderPlainNode(dir, undefined)).toBe("42")
  }, 30_000)

  it("gives a CommonJS-compiled module's named exports as the module's own (not under default)", () => {
    // What Node's import gives of tsx's CommonJS output: `default` alone, `module.exports` marked `__esModule`.
    const compiled = Object.defineProperty({ answer: 42 }, "__esModule", { value: true })
    expect(esModuleExports({ default: compiled })).toEqual({ answer: 42 })
    // An ES module's own default export (an agent, say) and a plain CommonJS module stay as they are.
    const agentLike = { name: "calculator" }
    expect(esModuleExports({ default: agentLike })).toEqual({ default: agentLike })
    expect(esModuleExports({ default: compiled, other: 1 })).toEqual({ default: compiled, other: 1 })
  })
})
