/**
 * The calculator on Vercel's AI SDK (`generateText` with tools), over a plain `LanguageModelV3` object
 * (not `MockLanguageModelV3`, which records every call). Two forms: tools given the zod object as
 * shipped in the docs' first examples (`inputSchema: z.object(...)`, converted on every use), and wrapped
 * once with `zodSchema()` as the docs advise for reuse.
 */
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider"
import { generateText, stepCountIs, tool, zodSchema } from "ai"
import { z } from "zod"
import { callUsage, type Counters, type Harness, type MakeRunner, maxTurns, question, runTool, type Scenario, systemPrompt } from "./script.ts"

const Operands = z.object({ a: z.number(), b: z.number() })
/** `callUsage` in the AI SDK's language-model form (every mock of it reports this). */
export const usage = {
  inputTokens: { total: callUsage.inputTokens, noCache: callUsage.inputTokens, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: callUsage.outputTokens, text: callUsage.outputTokens, reasoning: undefined }
}

/** A plain language model: an object with `doGenerate`, as a provider package returns. */
export const plainModel = (scenario: Scenario, { counters, park }: Harness): LanguageModelV3 => {
  let ids = 0
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: "calculator",
    supportedUrls: {},
    async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
      let toolResults = 0
      for (const message of options.prompt) if (message.role === "tool") toolResults += message.content.length
      if (park !== undefined) await park(toolResults)
      counters.modelCalls++
      const step = scenario.step(toolResults)
      return step === undefined
        ? { content: [{ type: "text", text: scenario.finalAnswer }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }
        : {
          content: [{ type: "tool-call", toolCallId: `call_${ids++}`, toolName: step.tool, input: JSON.stringify(step.args) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: []
        }
    },
    doStream() {
      throw new Error("streaming is not used by this benchmark")
    }
  }
}

/**
 * The calculator's tools: the zod object as shipped, or wrapped once with `zodSchema()` (`wrap`);
 * `approve` names a tool that needs approval before it runs (`needsApproval: true`, the approval bench).
 */
export const calculatorTools = (
  scenario: Scenario,
  counters: Counters,
  options: { readonly wrap: boolean; readonly approve?: "add" | "multiply" }
) => {
  const inputSchema = options.wrap ? zodSchema(Operands) : Operands
  const approval = (name: "add" | "multiply") => (options.approve === name ? { needsApproval: true } : {})
  return {
    add: tool({ description: "Add two numbers", inputSchema, ...approval("add"), execute: runTool(scenario, counters, "add") }),
    multiply: tool({ description: "Multiply two numbers", inputSchema, ...approval("multiply"), execute: runTool(scenario, counters, "multiply") })
  }
}

const makeVercelRunner = (wrap: boolean): MakeRunner => (scenario, harness) => {
  const tools = calculatorTools(scenario, harness.counters, { wrap })
  const model = plainModel(scenario, harness)
  return async () => {
    const result = await generateText({ model, system: systemPrompt, prompt: question, tools, stopWhen: stepCountIs(maxTurns(scenario)) })
    return result.text
  }
}

/** As shipped: `inputSchema: z.object(...)`. */
export const makeRunner = makeVercelRunner(false)
/** With the schema wrapped once: `inputSchema: zodSchema(z.object(...))`. */
export const makeRunnerZodSchema = makeVercelRunner(true)
