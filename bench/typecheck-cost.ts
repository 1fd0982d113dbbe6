/**
 * `npm run bench:types`: what the package costs a consumer's type-checker. A fresh consumer project
 * imports the built package (dist/ through `exports`, as npm installs it) and TypeScript 5.9 checks four
 * programs with `--extendedDiagnostics`: importing only, one agent with 5 tools, one with 40, and 20
 * agents of 3 tools each. Prints type instantiations and check time (median of BENCH_TYPES_ROUNDS runs),
 * beside a baseline program that imports only `effect`. Run `npm run build` first.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
if (!existsSync(join(root, "dist/index.d.ts"))) throw new Error("run `npm run build` first")
const rounds = Number(process.env.BENCH_TYPES_ROUNDS ?? 3)

const work = mkdtempSync(join(tmpdir(), "typecheck-cost-"))
mkdirSync(join(work, "node_modules"))
symlinkSync(root, join(work, "node_modules/effect-agent-dsl"))
symlinkSync(join(root, "node_modules/effect"), join(work, "node_modules/effect"))
mkdirSync(join(work, "node_modules/@types"))
symlinkSync(join(root, "node_modules/@types/node"), join(work, "node_modules/@types/node"))
writeFileSync(join(work, "package.json"), JSON.stringify({ type: "module" }))

const tool = (i: number) =>
  `const t${i} = tool("t${i}", { description: "tool ${i}", args: Schema.Struct({ a: Schema.Finite, b: Schema.String }), run: ({ a, b }) => b.repeat(a) })`
const agentWith = (name: string, tools: ReadonlyArray<number>) =>
  `export const ${name} = agent("${name}").model(model).tools({ ${tools.map((i) => `t${i}`).join(", ")} })
  .skills((h) => [skill("s", "all").tools(${tools.map((i) => `h.t${i}`).join(", ")})])
  .onToolUse(({ tool }) => void tool)
export const ${name}Out: Promise<string> = ${name}.run("x")`
const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const header = `import { Schema } from "effect"
import { agent, skill, tool } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"
const model = scriptedModel([])`

const programs: ReadonlyArray<readonly [string, string]> = [
  ["baseline: import only effect", `import { Schema } from "effect"\nexport const s = Schema.String`],
  ["import the package", `import { agent } from "effect-agent-dsl"\nexport const a = agent`],
  ["one agent, 5 tools", `${header}\n${range(5).map(tool).join("\n")}\n${agentWith("a0", range(5))}`],
  ["one agent, 40 tools", `${header}\n${range(40).map(tool).join("\n")}\n${agentWith("a0", range(40))}`],
  ["20 agents, 3 tools each", `${header}\n${range(60).map(tool).join("\n")}\n${range(20).map((a) => agentWith(`a${a}`, [a * 3, a * 3 + 1, a * 3 + 2])).join("\n")}`]
]

const tsc = join(root, "node_modules/typescript5/bin/tsc")
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`TypeScript ${execFileSync(process.execPath, [tsc, "-v"], { encoding: "utf8" }).trim()}, strict, NodeNext, skipLibCheck\n`)
console.log("| program | instantiations | check time (s) | total time (s) |\n|---|---:|---:|---:|")
for (const [label, source] of programs) {
  const file = join(work, "main.ts")
  writeFileSync(file, source)
  const checks: Array<number> = []
  const totals: Array<number> = []
  let instantiations = 0
  for (let round = 0; round < rounds; round++) {
    const out = execFileSync(process.execPath, [
      tsc, "--noEmit", "--strict", "--skipLibCheck", "--module", "NodeNext", "--moduleResolution", "NodeNext",
      "--target", "ES2022", "--types", "node", "--extendedDiagnostics", file
    ], { cwd: work, encoding: "utf8" })
    const field = (name: string) => Number(new RegExp(`${name}:\\s+([\\d.]+)`).exec(out)?.[1])
    instantiations = field("Instantiations")
    checks.push(field("Check time"))
    totals.push(field("Total time"))
  }
  console.log(`| ${label} | ${instantiations.toLocaleString("en")} | ${median(checks).toFixed(2)} | ${median(totals).toFixed(2)} |`)
}
rmSync(work, { recursive: true, force: true })
