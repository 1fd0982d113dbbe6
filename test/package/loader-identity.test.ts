/**
 * Effect modules loaded on first use (`src/internal/lazy-effect.ts`) come through `require`, which some
 * loaders answer with a copy of their own of the module (tsx transpiles the required file again). The
 * features behind them, and the ones that build Schemas (kept static for that reason), must work there
 * too: the fixture uses each once under tsx, in a fresh process, and reports what it got.
 */
import { spawnSync } from "node:child_process"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")

describe("lazily loaded Effect modules under a loader whose require gives a copy (tsx)", () => {
  it("every feature behind one works: JSON Schema tools, strict tools, fromEnv, its Layer, streaming, SSE, file knowledge", () => {
    const result = spawnSync(process.execPath, ["--import", "tsx", "test/package/fixture/loader-identity.ts"], { cwd: root, encoding: "utf8" })
    expect(result.status, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout.trim().split("\n").at(-1)!)).toEqual({
      jsonSchemaTool: ["Valid", "Invalid"],
      strictTool: ["Valid", "Invalid"],
      fromEnv: [6, "refused"],
      fromEnvLayer: "function",
      runStream: "RunStart,SkillChosen,Turn,ModelCall,TextDelta,ModelResponse,RunEnd",
      eventStreamResponse: true,
      fileKnowledge: "true"
    })
  }, 60_000)
})
