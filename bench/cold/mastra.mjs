// Cold start, Mastra 1.71: import `@mastra/core/agent`, `@mastra/core/tools` and zod, run the calculator once over a plain LanguageModelV3 object.
const t0 = performance.now()
const { Agent } = await import("@mastra/core/agent")
const { createTool } = await import("@mastra/core/tools")
const { z } = await import("zod")
const imported = performance.now()
const Operands = z.object({ a: z.number(), b: z.number() })
const steps = [{ tool: "add", args: { a: 3, b: 5 } }, { tool: "multiply", args: { a: 8, b: 2 } }, { tool: "add", args: { a: 16, b: 1 } }]
const usage = { inputTokens: { total: 10, noCache: 10 }, outputTokens: { total: 5, text: 5 } }
const model = {
  specificationVersion: "v3", provider: "bench", modelId: "calculator", supportedUrls: {},
  async doGenerate(options) {
    const n = options.prompt.filter((m) => m.role === "tool").length
    const step = steps[n]
    return step === undefined
      ? { content: [{ type: "text", text: "17" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }
      : { content: [{ type: "tool-call", toolCallId: `c${n}`, toolName: step.tool, input: JSON.stringify(step.args) }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] }
  },
  doStream() { throw new Error("unused") }
}
const tools = {
  add: createTool({ id: "add", description: "Add two numbers", inputSchema: Operands, execute: async ({ a, b }) => a + b }),
  multiply: createTool({ id: "multiply", description: "Multiply two numbers", inputSchema: Operands, execute: async ({ a, b }) => a * b })
}
const agent = new Agent({ id: "calculator", name: "calculator", instructions: "You are a calculator. Use the tools.", model, tools })
const result = await agent.generate("What is ((3 + 5) * 2) + 1?", { maxSteps: 8 })
if (result.text !== "17") throw new Error(`answered ${result.text}`)
const done = performance.now()
const cpu = process.cpuUsage()
console.log(JSON.stringify({ startMs: t0, importMs: imported - t0, runMs: done - imported, totalMs: done, cpuMs: (cpu.user + cpu.system) / 1000 }))
