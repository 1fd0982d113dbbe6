/**
 * The calculator on Mastra (`@mastra/core` 1.71 `Agent.generate` with `createTool` tools, zod schemas),
 * over the same plain AI SDK `LanguageModelV3` object the AI SDK peer gets (`plainModel`): Mastra runs
 * its agents on AI SDK models. No memory, storage or observability configured (an agent as its docs'
 * first example makes it).
 */
import { Agent } from "@mastra/core/agent"
import { createTool } from "@mastra/core/tools"
import { z } from "zod"
import { type Counters, type MakeRunner, maxTurns, question, runTool, type Scenario, systemPrompt } from "./script.ts"
import { plainModel } from "./vercel-ai.ts"

const Operands = z.object({ a: z.number(), b: z.number() })

/** The calculator's tools as Mastra tools; `approve` names one that needs approval (`requireApproval`). */
export const mastraTools = (scenario: Scenario, counters: Counters, options: { readonly approve?: "add" | "multiply" } = {}) => {
  const make = (name: "add" | "multiply", description: string) => {
    const run = runTool(scenario, counters, name)
    return createTool({
      id: name,
      description,
      inputSchema: Operands,
      ...(options.approve === name ? { requireApproval: true } : {}),
      execute: async (input: { readonly a: number; readonly b: number }) => run(input)
    })
  }
  return { add: make("add", "Add two numbers"), multiply: make("multiply", "Multiply two numbers") }
}

export const makeRunner: MakeRunner = (scenario, harness) => {
  const agent = new Agent({
    id: "calculator",
    name: "calculator",
    instructions: systemPrompt,
    model: plainModel(scenario, harness),
    tools: mastraTools(scenario, harness.counters)
  })
  return async () => (await agent.generate(question, { maxSteps: maxTurns(scenario) })).text
}
