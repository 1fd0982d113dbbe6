import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { importGraph, importSpecifiers, layerOf, violations } from "./import-graph.ts"

const src = fileURLToPath(new URL("../../src", import.meta.url))

describe("the import graph of src/", () => {
  const edges = importGraph(src)

  it("finds the imports (the checker is not looking at an empty graph)", () => {
    expect(edges.length).toBeGreaterThan(100)
    expect(edges).toContainEqual({ from: "agent.ts", to: "runtime/run-agent.ts" })
    expect(edges).toContainEqual({ from: "runtime/step.ts", to: "model/messages.ts" })
  })

  it("puts every file in a layer", () => {
    const files = new Set(edges.flatMap((e) => [e.from, e.to]))
    expect([...files].filter((f) => layerOf(f) === undefined)).toEqual([])
  })

  it("goes one way: internal → model → errors → dsl → runtime | providers | trace | node → testing → entry", () => {
    expect(violations(edges)).toEqual([])
  })

  it("keeps dsl free of runtime and providers, and providers free of dsl and runtime", () => {
    const from = (layer: string) => edges.filter((e) => e.from.startsWith(`${layer}/`))
    expect(from("dsl").filter((e) => /^(runtime|providers|trace|node)\//.test(e.to))).toEqual([])
    expect(from("providers").filter((e) => /^(dsl|runtime|trace)\//.test(e.to))).toEqual([])
  })
})

describe("the checker", () => {
  it("reads static, type-only, re-export, side-effect and dynamic imports", () => {
    const source = [
      `import { a } from "./a.ts"`,
      `import type { B } from "../b.ts"`,
      `export { c } from "./c.ts"`,
      `export type { D } from "./d.ts"`,
      `import "./e.ts"`,
      `const f = await import("./f.ts")`,
      `import {\n  g,\n  h\n} from "./gh.ts"`
    ].join("\n")
    expect(importSpecifiers(source)).toEqual(expect.arrayContaining(["./a.ts", "../b.ts", "./c.ts", "./d.ts", "./e.ts", "./f.ts", "./gh.ts"]))
  })

  it("reports an upward import, a sibling import and a file outside the layers", () => {
    expect(violations([
      { from: "dsl/agent.ts", to: "runtime/run-agent.ts" },
      { from: "providers/openai.ts", to: "runtime/emit.ts" },
      { from: "model/messages.ts", to: "errors.ts" },
      { from: "stray/file.ts", to: "errors.ts" },
      { from: "runtime/loop.ts", to: "dsl/tool.ts" },
      { from: "providers/from-env.ts", to: "dsl/budget.ts" }
    ])).toEqual([
      "dsl/agent.ts (dsl) imports runtime/run-agent.ts (runtime), a higher layer",
      "providers/openai.ts (providers) imports runtime/emit.ts (runtime), a sibling layer",
      "model/messages.ts (model) imports errors.ts (errors), a higher layer",
      "stray/file.ts is in no layer",
      "providers/from-env.ts (providers) imports dsl/budget.ts (dsl), which it must not use"
    ])
  })
})
