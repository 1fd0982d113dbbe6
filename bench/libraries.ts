/** The implementations compared, by name; the floors last. */
import { makeRunner as openAiAgents } from "./calculator/openai-agents.ts"
import { makeRunner as mastra } from "./calculator/mastra.ts"
import { makeRunner as ours } from "./calculator/ours.ts"
import type { MakeRunner } from "./calculator/script.ts"
import { makeRunner as vercelAi, makeRunnerZodSchema as vercelAiZodSchema } from "./calculator/vercel-ai.ts"
import { makeRunner as floorEffect } from "./floor-effect.ts"
import { makeRunner as floor } from "./floor.ts"
import { oursSource } from "./ours-lib.ts"

export interface Library {
  readonly name: string
  readonly key: "ours" | "ai" | "ai-zodSchema" | "agents" | "mastra" | "floor-effect" | "floor"
  readonly makeRunner: MakeRunner
  /** In-flight runs for the memory section when fewer than `BENCH_MEMORY_RUNS` (a library that takes ~40 ms of CPU per run). */
  readonly memoryRuns?: number
}

export const libraries: ReadonlyArray<Library> = [
  { key: "ours", name: `effect-agent-dsl (ours, ${oursSource})`, makeRunner: ours },
  { key: "ai", name: "ai 6 (zod as shipped)", makeRunner: vercelAi },
  { key: "ai-zodSchema", name: "ai 6 (zodSchema())", makeRunner: vercelAiZodSchema },
  { key: "agents", name: "@openai/agents 0.14", makeRunner: openAiAgents },
  { key: "mastra", name: "@mastra/core 1.71 (Agent.generate)", makeRunner: mastra, memoryRuns: 500 },
  { key: "floor-effect", name: "Effect floor (the floor as one Effect.gen)", makeRunner: floorEffect },
  { key: "floor", name: "floor (hand-written loop)", makeRunner: floor }
]

export const libraryByKey = (key: string): Library => {
  const found = libraries.find((library) => library.key === key)
  if (found === undefined) throw new Error(`unknown library ${key}; one of ${libraries.map((l) => l.key).join(", ")}`)
  return found
}
