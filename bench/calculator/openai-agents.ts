/** The calculator on the OpenAI Agents SDK (`Agent` + `run`), over a plain custom `Model`; tracing disabled. */
import { Agent, type Model, type ModelRequest, type ModelResponse, run, setTracingDisabled, tool, Usage } from "@openai/agents"
import { z } from "zod"
import { callUsage, type Harness, type MakeRunner, maxTurns, question, runTool, type Scenario, systemPrompt } from "./script.ts"

setTracingDisabled(true)

const Operands = z.object({ a: z.number(), b: z.number() })

/** `callUsage` in the Agents SDK's form (every mock of it reports this). */
export const usageData = {
  requests: 1,
  inputTokens: callUsage.inputTokens,
  outputTokens: callUsage.outputTokens,
  totalTokens: callUsage.inputTokens + callUsage.outputTokens
}

/** A plain `Model` answering `scenario` (the same replies as every library's mock). */
export class ScriptedModel implements Model {
  #ids = 0
  constructor(private readonly scenario: Scenario, private readonly harness: Harness) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    let toolResults = 0
    if (typeof request.input !== "string") for (const item of request.input) if (item.type === "function_call_result") toolResults++
    if (this.harness.park !== undefined) await this.harness.park(toolResults)
    this.harness.counters.modelCalls++
    const step = this.scenario.step(toolResults)
    const usage = new Usage(usageData)
    const id = this.#ids++
    if (step === undefined) {
      return {
        usage,
        output: [{
          type: "message",
          id: `msg_${id}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: this.scenario.finalAnswer }]
        }]
      }
    }
    return {
      usage,
      output: [{ type: "function_call", id: `fc_${id}`, callId: `call_${id}`, name: step.tool, arguments: JSON.stringify(step.args), status: "completed" }]
    }
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("streaming is not used by this benchmark")
  }
}

/** The calculator agent; `approve` names a tool that needs approval before it runs (`needsApproval: true`, the approval bench). */
export const calculatorAgent = (scenario: Scenario, harness: Harness, options: { readonly approve?: "add" | "multiply" } = {}) => {
  const approval = (name: "add" | "multiply") => (options.approve === name ? { needsApproval: true } : {})
  const add = tool({ name: "add", description: "Add two numbers", parameters: Operands, ...approval("add"), execute: runTool(scenario, harness.counters, "add") })
  const multiply = tool({
    name: "multiply",
    description: "Multiply two numbers",
    parameters: Operands,
    ...approval("multiply"),
    execute: runTool(scenario, harness.counters, "multiply")
  })
  return new Agent({ name: "calculator", instructions: systemPrompt, model: new ScriptedModel(scenario, harness), tools: [add, multiply] })
}

export const makeRunner: MakeRunner = (scenario, harness) => {
  const calculator = calculatorAgent(scenario, harness)
  return async () => {
    const result = await run(calculator, question, { maxTurns: maxTurns(scenario) })
    return String(result.finalOutput)
  }
}
