/**
 * Approval overhead: the calculator where `multiply` needs approval. One complete approved run is
 * `run` (suspends before multiply) → snapshot as JSON text → parse → `resume` with approve → the answer.
 * Beside it, the same calculator without approval (the in-memory run), and the snapshot's size.
 */
import { Effect, Schema } from "effect"
import { calculator, callUsage, type Harness, maxTurns, question, runTool, systemPrompt } from "./calculator/script.ts"
import { interleavedRounds, show } from "./measure.ts"
import { ours } from "./ours-lib.ts"

const { agent, Decision, ModelClient, tool, encodeSnapshot } = ours
const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })

const makeModel = ({ counters }: Harness) => {
  let ids = 0
  return ModelClient.fromFunction(async (request) => {
    let toolResults = 0
    for (const message of request.messages) if (message.role === "tool") toolResults++
    counters.modelCalls++
    const step = calculator.step(toolResults)
    return step === undefined
      ? { _tag: "Text", content: calculator.finalAnswer, usage: callUsage }
      : { _tag: "ToolCalls", calls: [{ id: `call_${ids++}`, name: step.tool, arguments: JSON.stringify(step.args) }], usage: callUsage }
  })
}

const plainRunner = () => {
  const counters = { modelCalls: 0, toolRuns: 0 }
  const add = tool("add", { description: "Add two numbers", args: Operands, run: runTool(calculator, counters, "add") })
  const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: runTool(calculator, counters, "multiply") })
  const plain = agent("calculator").prompt(systemPrompt).model(makeModel({ counters })).budget({ maxTurns: maxTurns(calculator) }).tools({ add, multiply })
  return () => plain.run(question)
}

let snapshotBytes = 0
const approvalRunner = () => {
  const counters = { modelCalls: 0, toolRuns: 0 }
  const add = tool("add", { description: "Add two numbers", args: Operands, run: runTool(calculator, counters, "add") })
  const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, needsApproval: true, run: runTool(calculator, counters, "multiply") })
  const teller = agent("calculator").prompt(systemPrompt).model(makeModel({ counters })).budget({ maxTurns: maxTurns(calculator) }).tools({ add, multiply })
  return async () => {
    const first = await teller.run(question)
    if (first._tag !== "Suspended") throw new Error("the approval run must suspend")
    const json = encodeSnapshot(first.snapshot)
    snapshotBytes = json.length
    const decisions = Object.fromEntries(first.pending.map((p) => [p.id, Decision.approve]))
    const rest = await Effect.runPromise(teller.resume(json, decisions))
    if (rest._tag !== "Completed" || rest.output !== calculator.finalAnswer) throw new Error("the resumed run must answer 17")
    return rest.output
  }
}

export const runApproval = async (options: { readonly rounds: number; readonly roundMs: number }) => {
  const subjects = [
    { name: "plain run (no approval)", runOnce: plainRunner() },
    { name: "run → Suspended → snapshot JSON → resume(approve) → answer", runOnce: approvalRunner() }
  ]
  for (const subject of subjects) if ((await subject.runOnce()) !== calculator.finalAnswer) throw new Error(`${subject.name}: wrong answer`)
  const timed = await interleavedRounds(subjects.map((s) => s.runOnce), options)
  const plain = timed[0]!.wallUs.median
  return timed.map((t, index) => ({
    what: subjects[index]!.name,
    "µs/run wall": show(t.wallUs),
    "µs/run CPU": show(t.cpuUs),
    "÷ plain": +(t.wallUs.median / plain).toFixed(2),
    "extra µs": Math.round(t.wallUs.median - plain),
    "snapshot bytes": index === 1 ? snapshotBytes : ""
  }))
}
