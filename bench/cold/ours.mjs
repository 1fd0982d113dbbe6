// Cold start, ours: import the BUILT package by its name (package self-reference → dist/) and run the
// calculator once over a plain async mock. Plain `node`, no TypeScript loader. Prints timings as JSON.
// `node ours.mjs direct`: the program takes Schema from `effect/Schema` rather than Effect's barrel.
const t0 = performance.now()
const { agent, ModelClient, skill, tool } = await import("effect-agent-dsl")
const { Schema } = process.argv[2] === "direct" ? { Schema: await import("effect/Schema") } : await import("effect")
const imported = performance.now()
const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const steps = [{ tool: "add", args: { a: 3, b: 5 } }, { tool: "multiply", args: { a: 8, b: 2 } }, { tool: "add", args: { a: 16, b: 1 } }]
const usage = { inputTokens: 10, outputTokens: 5 }
const model = ModelClient.fromFunction(async (request) => {
  const n = request.messages.filter((m) => m.role === "tool").length
  const step = steps[n]
  return step === undefined ? { _tag: "Text", content: "17", usage } : { _tag: "ToolCalls", calls: [{ id: `c${n}`, name: step.tool, arguments: JSON.stringify(step.args) }], usage }
})
const add = tool("add", { description: "Add two numbers", args: Operands, run: async ({ a, b }) => a + b })
const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: async ({ a, b }) => a * b })
const calculator = agent("calculator").prompt("You are a calculator. Use the tools.").model(model).tools({ add, multiply })
  .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
const answer = await calculator.run("What is ((3 + 5) * 2) + 1?")
if (answer !== "17") throw new Error(`answered ${answer}`)
const done = performance.now()
const cpu = process.cpuUsage()
console.log(JSON.stringify({ startMs: t0, importMs: imported - t0, runMs: done - imported, totalMs: done, cpuMs: (cpu.user + cpu.system) / 1000 }))
