/** `npm run example:research` runs: the composed research pipeline on scripted models. */
import { execFileSync } from "node:child_process"
import { describe, expect, it } from "vitest"

describe("examples/research-pipeline.ts", () => {
  it("runs to the published verdict", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "examples/research-pipeline.ts"], { encoding: "utf8", timeout: 60_000 })
    expect(out).toContain("[research → reviewer] Success")
    expect(out).toContain("published (clear and sourced)")
  })
})
