/**
 * Composition overhead, per child run. A child agent answers in one model call. Measured, interleaved:
 * the child run directly; a parent whose model calls the child as a tool (`child.asTool`) three times
 * (one per turn), beside the same parent calling a plain async tool with the same answer; and a
 * three-stage `pipeline` of such agents, beside the three agents run one after the other by hand.
 */
import { Schema } from "effect"
import { callUsage } from "./calculator/script.ts"
import { interleavedRounds, show } from "./measure.ts"
import { ours } from "./ours-lib.ts"

const { agent, ModelClient, pipeline, tool } = ours
const childCalls = 3

const textModel = (content: string) => ModelClient.fromFunction(async () => ({ _tag: "Text" as const, content, usage: callUsage }))
const child = (name: string) => agent(name).prompt("Answer briefly.").model(textModel("child answer"))

const parentModel = () => {
  let ids = 0
  return ModelClient.fromFunction(async (request) => {
    let toolResults = 0
    for (const message of request.messages) if (message.role === "tool") toolResults++
    return toolResults < childCalls
      ? { _tag: "ToolCalls" as const, calls: [{ id: `call_${ids++}`, name: "ask", arguments: JSON.stringify({ input: `question ${toolResults}` }) }], usage: callUsage }
      : { _tag: "Text" as const, content: "done", usage: callUsage }
  })
}

export const runComposition = async (options: { readonly rounds: number; readonly roundMs: number }) => {
  const direct = child("child")
  const viaTool = agent("parent").prompt("Ask the child.").model(parentModel()).budget({ maxTurns: childCalls + 2 })
    .tools({ ask: direct.asTool({ name: "ask", description: "Ask the child" }) })
  const plainTool = agent("parent").prompt("Ask the child.").model(parentModel()).budget({ maxTurns: childCalls + 2 })
    .tools({ ask: tool("ask", { description: "Ask the child", args: Schema.Struct({ input: Schema.String }), run: async () => "child answer" }) })
  const stages = [child("a"), child("b"), child("c")] as const
  const piped = pipeline("three", stages[0], stages[1], stages[2])
  const byHand = async () => {
    let value = "go"
    for (const stage of stages) value = await stage.run(value)
    return value
  }
  const subjects = [
    { name: "child run directly", runOnce: () => direct.run("question") },
    { name: `parent + ${childCalls} calls of a plain tool`, runOnce: () => plainTool.run("go") },
    { name: `parent + ${childCalls} calls of child.asTool`, runOnce: () => viaTool.run("go") },
    { name: "3 agents run one after the other by hand", runOnce: byHand },
    { name: "pipeline of the same 3 agents", runOnce: () => piped.run("go") }
  ]
  for (const subject of subjects) await subject.runOnce()
  const timed = await interleavedRounds(subjects.map((s) => s.runOnce), options)
  const us = (i: number) => timed[i]!.wallUs.median
  const rows = timed.map((t, index) => ({ what: subjects[index]!.name, "µs/run wall": show(t.wallUs), "µs/run CPU": show(t.cpuUs), "per child run (µs)": "" as string | number }))
  rows[0]!["per child run (µs)"] = Math.round(us(0))
  rows[2]!["per child run (µs)"] = `${Math.round((us(2) - us(1)) / childCalls)} (vs ${Math.round(us(0))} direct)`
  rows[4]!["per child run (µs)"] = `${Math.round(us(4) / 3)} (vs ${Math.round(us(3) / 3)} by hand)`
  return rows
}
