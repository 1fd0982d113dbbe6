/** The calculator on the OpenAI Agents SDK (`Agent` + `run`), over a custom `Model`. */
import { Agent, type Model, type ModelRequest, type ModelResponse, run, setTracingDisabled, tool, Usage } from "@openai/agents"
import { z } from "zod"
import { type Counters, finalAnswer, type MakeRunner, nextTick, question, steps } from "./script.ts"

setTracingDisabled(true)

const Operands = z.object({ a: z.number(), b: z.number() })

class ScriptedModel implements Model {
  constructor(private readonly concurrentMode: boolean, private readonly counters: Counters) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    if (this.concurrentMode) await nextTick()
    this.counters.modelCalls++
    const input = typeof request.input === "string" ? [] : request.input
    const toolResults = input.filter((item) => item.type === "function_call_result").length
    const step = steps[toolResults]
    const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })
    if (step === undefined) {
      return {
        usage,
        output: [{
          type: "message",
          id: `msg_${toolResults}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: finalAnswer }]
        }]
      }
    }
    return {
      usage,
      output: [{
        type: "function_call",
        id: `fc_${toolResults}`,
        callId: `call_${toolResults}`,
        name: step.tool,
        arguments: JSON.stringify(step.args),
        status: "completed"
      }]
    }
  }

  // The benchmark runs without streaming.
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("streaming is not used by the benchmark")
  }
}

export const makeRunner: MakeRunner = ({ concurrentMode, counters }) => {
  const add = tool({ name: "add", description: "Add two numbers", parameters: Operands, execute: async ({ a, b }) => (counters.toolRuns++, a + b) })
  const multiply = tool({ name: "multiply", description: "Multiply two numbers", parameters: Operands, execute: async ({ a, b }) => (counters.toolRuns++, a * b) })
  const calculator = new Agent({
    name: "calculator",
    instructions: "You are a calculator. Use the tools.",
    model: new ScriptedModel(concurrentMode, counters),
    tools: [add, multiply]
  })
  return async () => {
    const result = await run(calculator, question, { maxTurns: 8 })
    return String(result.finalOutput)
  }
}
