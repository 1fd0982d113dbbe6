/**
 * The API reference's rule: an export without a doc comment fails the docs build
 * (scripts/docs-typedoc.mjs). Tried on a fixture entry point with one documented and one undocumented
 * export, so a check that passes cannot be one that checks nothing. (The whole API's check runs in
 * `npm run docs:build`; this fixture's TypeDoc run takes seconds.)
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
describe("docs build: every export documented", () => {
  it("the API reference covers every entry point of package.json exports (typedoc.json entryPoints)", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string | { types?: string }> }
    const fromExports = Object.values(pkg.exports)
      .flatMap((target) => (typeof target === "object" && target.types !== undefined ? [target.types] : []))
      .map((types) => types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts"))
    const typedoc = JSON.parse(readFileSync(join(root, "typedoc.json"), "utf8")) as { entryPoints: ReadonlyArray<string> }
    expect([...typedoc.entryPoints].sort()).toEqual(fromExports.sort())
  })

  // Inside the project (TypeDoc treats files under node_modules as external and leaves them out).
  const scratch = mkdtempSync(join(root, "test", "docs", ".typedoc-fixture-"))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))

  it("fails and names the undocumented export", async () => {
    const entry = join(scratch, "entry.ts")
    writeFileSync(join(scratch, "tsconfig.json"), JSON.stringify({ extends: join(root, "tsconfig.json"), include: ["entry.ts"] }))
    // The project's typedoc.json with this entry point: what `npm run docs:build` does, on a smaller API.
    writeFileSync(
      join(scratch, "typedoc.json"),
      JSON.stringify({ extends: [join(root, "typedoc.json")], entryPoints: ["entry.ts"], out: "api", tsconfig: "tsconfig.json" })
    )
    writeFileSync(
      entry,
      ["/** Documented: adds one. */", "export const documented = (n: number): number => n + 1", "", "export const forgotten = (n: number): number => n - 1", ""].join("\n")
    )
    const result = await new Promise<{ code: number | null; output: string }>((resolve) =>
      execFile(
        process.execPath,
        ["scripts/docs-typedoc.mjs", "--options", join(scratch, "typedoc.json")],
        { cwd: root },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), output: `${stdout}${stderr}` })
      )
    )
    expect(result.code).toBe(1)
    expect(result.output).toContain("1 public export(s) without a doc comment")
    expect(result.output).toContain(": forgotten")
    expect(result.output).not.toContain(": documented")
  }, 300_000)
})
