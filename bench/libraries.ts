/** The implementations compared, by name. */
import { makeRunner as openAiAgents } from "./calculator/openai-agents.ts"
import { makeRunner as ours } from "./calculator/ours.ts"
import type { MakeRunner } from "./calculator/script.ts"
import { makeRunner as vercelAi } from "./calculator/vercel-ai.ts"

export const libraries: ReadonlyArray<{ readonly name: string; readonly makeRunner: MakeRunner }> = [
  { name: "effect-agent-dsl (ours)", makeRunner: ours },
  { name: "ai (Vercel AI SDK) 6", makeRunner: vercelAi },
  { name: "@openai/agents 0.14", makeRunner: openAiAgents }
]
