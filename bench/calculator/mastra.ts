/**
 * The calculator on Mastra (`@mastra/core` 1.71 `Agent.generate` with `createTool` tools, zod schemas),
 * over the same plain AI SDK `LanguageModelV3` object the AI SDK peer gets (`plainModel`): Mastra runs
 * its agents on AI SDK models. No memory, storage or observability configured (an agent as its docs'
 * first example makes it).
 */
import type { LanguageModelV3 } from "@ai-sdk/provider"
import { Agent } from "@mastra/core/agent"
import { createTool } from "@mastra/core/tools"
import { z } from "zod"
import { type Counters, type Harness, type MakeRunner, maxTurns, question, runTool, type Scenario, systemPrompt } from "./script.ts"
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

/** The calculator agent over the plain model (or `model`, to share one); `approve` names a tool that needs approval. */
export const calculatorAgent = (
  scenario: Scenario,
  harness: Harness,
  options: { readonly approve?: "add" | "multiply"; readonly model?: LanguageModelV3 } = {}
) =>
  new Agent({
    id: "calculator",
    name: "calculator",
    instructions: systemPrompt,
    model: options.model ?? plainModel(scenario, harness),
    tools: mastraTools(scenario, harness.counters, options)
  })

export const makeRunner: MakeRunner = (scenario, harness) => {
  const agent = calculatorAgent(scenario, harness)
  return async () => (await agent.generate(question, { maxSteps: maxTurns(scenario) })).text
}
