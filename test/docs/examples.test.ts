/**
 * Every TypeScript code block of the guides compiles as a consumer's module, imports by
 * the package name (scripts/docs-examples.mjs: one tsc program over all blocks). The checker is tried on
 * deliberately broken pages first, so a check that reports nothing cannot be one that sees nothing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { checkExamples, extractBlocks, markdownFiles, root } from "../../scripts/docs-examples.mjs"

// node_modules/.cache is not there after a clean `npm ci` until something makes it.
const cache = join(root, "node_modules", ".cache")
mkdirSync(cache, { recursive: true })
const scratch = mkdtempSync(join(cache, "docs-examples-test-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const page = (name: string, markdown: string): string => {
  const path = join(scratch, name)
  writeFileSync(path, markdown)
  return path
}

describe("docs code blocks", () => {
  it("extracts fences with their language, flags and first line", () => {
    const blocks = extractBlocks("# t\n\n```ts partial\nconst a = 1\n```\n\n- item\n\n  ```sh\n  npm test\n  ```\n")
    expect(blocks).toEqual([
      { lang: "ts", flags: ["partial"], line: 4, code: "const a = 1" },
      { lang: "sh", flags: [], line: 10, code: "npm test" }
    ])
  })

  it("reports a block that does not compile at its page and line, forgives a partial block only its unknown names, compiles hidden set-up lines and Effect.gen bodies", async () => {
    const broken = page(
      "broken.md",
      [
        "# Broken",
        "",
        "```ts",
        'import { agent } from "effect-agent-dsl"',
        "agent(42)",
        "```",
        "",
        "```ts partial",
        "const calc = agent(\"calc\").model(client)",
        "calc.budget({ maxTurn: 3 })",
        "```",
        "",
        "```ts partial",
        "const ok = agent(\"ok\").model(client)",
        "```",
        ""
      ].join("\n")
    )
    const fine = page(
      "fine.md",
      [
        "```ts",
        'import { Effect } from "effect"',
        "declare const n: number",
        "// ---cut---",
        "const doubled = yield* Effect.succeed(n * 2)",
        "```",
        ""
      ].join("\n")
    )
    const { count, problems } = await checkExamples({ files: [broken, fine] })
    expect(count).toBe(4)
    expect(problems.some((p) => p.includes("fine.md"))).toBe(false)
    expect(problems.some((p) => p.includes("broken.md:5:"))).toBe(true)
    expect(problems.some((p) => p.includes("broken.md:10:") && p.includes("maxTurn"))).toBe(true)
    expect(problems.some((p) => p.includes("broken.md:14:"))).toBe(false)
    expect(problems.some((p) => p.includes("client"))).toBe(false)
  })

  it("every block of the guides and README.md compiles", async () => {
    const { count, problems } = await checkExamples({ files: markdownFiles() })
    expect(problems).toEqual([])
    expect(count).toBeGreaterThanOrEqual(50)
  })
})
