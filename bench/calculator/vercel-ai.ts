/** The calculator on Vercel's AI SDK (`generateText` with tools), over `MockLanguageModelV3` from `ai/test`. */
import { generateText, stepCountIs, tool } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import { z } from "zod"
import { finalAnswer, type MakeRunner, nextTick, question, steps } from "./script.ts"

const Operands = z.object({ a: z.number(), b: z.number() })
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

export const makeRunner: MakeRunner = ({ concurrentMode, counters }) => {
  const tools = {
    add: tool({ description: "Add two numbers", inputSchema: Operands, execute: async ({ a, b }) => (counters.toolRuns++, a + b) }),
    multiply: tool({ description: "Multiply two numbers", inputSchema: Operands, execute: async ({ a, b }) => (counters.toolRuns++, a * b) })
  }
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      if (concurrentMode) await nextTick()
      counters.modelCalls++
      const toolResults = options.prompt.filter((m) => m.role === "tool").length
      const step = steps[toolResults]
      return step === undefined
        ? { content: [{ type: "text", text: finalAnswer }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }
        : {
          content: [{ type: "tool-call", toolCallId: `call_${toolResults}`, toolName: step.tool, input: JSON.stringify(step.args) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: []
        }
    }
  })
  return async () => {
    const result = await generateText({
      model,
      system: "You are a calculator. Use the tools.",
      prompt: question,
      tools,
      stopWhen: stepCountIs(8)
    })
    return result.text
  }
}
