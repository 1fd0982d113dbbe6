// Cold start, OpenAI Agents SDK: import `@openai/agents` and zod, run the calculator once over a plain custom Model.
const t0 = performance.now()
const { Agent, run, setTracingDisabled, tool, Usage } = await import("@openai/agents")
const { z } = await import("zod")
const imported = performance.now()
setTracingDisabled(true)
const Operands = z.object({ a: z.number(), b: z.number() })
const steps = [{ tool: "add", args: { a: 3, b: 5 } }, { tool: "multiply", args: { a: 8, b: 2 } }, { tool: "add", args: { a: 16, b: 1 } }]
const model = {
  async getResponse(request) {
    const n = typeof request.input === "string" ? 0 : request.input.filter((i) => i.type === "function_call_result").length
    const step = steps[n]
    const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })
    return step === undefined
      ? { usage, output: [{ type: "message", id: `m${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "17" }] }] }
      : { usage, output: [{ type: "function_call", id: `f${n}`, callId: `c${n}`, name: step.tool, arguments: JSON.stringify(step.args), status: "completed" }] }
  },
  async *getStreamedResponse() { throw new Error("unused") }
}
const add = tool({ name: "add", description: "Add two numbers", parameters: Operands, execute: async ({ a, b }) => a + b })
const multiply = tool({ name: "multiply", description: "Multiply two numbers", parameters: Operands, execute: async ({ a, b }) => a * b })
const calculator = new Agent({ name: "calculator", instructions: "You are a calculator. Use the tools.", model, tools: [add, multiply] })
const result = await run(calculator, "What is ((3 + 5) * 2) + 1?", { maxTurns: 8 })
if (String(result.finalOutput) !== "17") throw new Error(`answered ${result.finalOutput}`)
const done = performance.now()
const cpu = process.cpuUsage()
console.log(JSON.stringify({ startMs: t0, importMs: imported - t0, runMs: done - imported, totalMs: done, cpuMs: (cpu.user + cpu.system) / 1000 }))
