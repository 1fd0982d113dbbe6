import { execFileSync } from "node:child_process"
import { mkdtemp, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, jsonlTrace, renderTrace, skill, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeCalculatorTools } from "../fixtures.ts"

const replies = [
  toolCalls([{ id: "c1", name: "add", arguments: '{"a":3,"b":5}' }]),
  toolCalls([{ id: "c2", name: "multiply", arguments: { a: "8", b: 2 } }]),
  toolCalls([{ id: "c3", name: "multiply", arguments: { a: 8, b: 2 } }]),
  text("16", { inputTokens: 12, outputTokens: 2 })
]

const calculator = () => {
  const { add, multiply } = makeCalculatorTools()
  return agent("calculator")
    // Stateless (chosen by the number of tool results so far), so concurrent runs can share it.
    .model(scriptedModel((request) => replies[request.messages.filter((m) => m.role === "tool").length]!))
    .tools({ add, multiply })
    .skills(({ add, multiply }) => [skill("compute").tools(add, multiply)])
}

describe("JSON Lines trace", () => {
  it("writes one line per event with the documented fields", async () => {
    const lines: Array<string> = []
    await calculator().onEvent(jsonlTrace({ write: (line) => lines.push(line) })).run("(3 + 5) * 2")
    expect(lines.every((l) => l.endsWith("\n"))).toBe(true)
    const parsed = lines.map((l) => JSON.parse(l))
    expect(parsed.map((l) => l.event)).toEqual([
      "RunStart", "SkillChosen",
      "Turn", "ModelCall", "ModelResponse", "ToolUse",
      "Turn", "ModelCall", "ModelResponse", "InvalidArgs",
      "Turn", "ModelCall", "ModelResponse", "ToolUse",
      "Turn", "ModelCall", "ModelResponse",
      "RunEnd"
    ])
    const run = parsed[0].run
    for (const line of parsed) {
      expect(line).toMatchObject({ v: 1, run, agent: "calculator" })
      expect(typeof line.ts).toBe("number")
    }
    expect(run).toMatch(/^run_/)
    expect(parsed[0]).toMatchObject({ input: "(3 + 5) * 2" })
    expect(parsed[3]).toMatchObject({ skill: "compute", turn: 1, messages: 2, tools: ["add", "multiply"], toolChoice: "auto" })
    expect(parsed[4]).toMatchObject({ response: "ToolCalls", calls: ["add"] })
    expect(parsed[5]).toMatchObject({ tool: "add", callId: "c1", args: { a: 3, b: 5 }, result: 8, validated: true })
    expect(parsed[9]).toMatchObject({ tool: "multiply", raw: { a: "8", b: 2 }, recovery: "Feedback" })
    expect(parsed[16]).toMatchObject({ response: "Text", text: "16", usage: { inputTokens: 12, outputTokens: 2 } })
    expect(parsed[17]).toMatchObject({ outcome: "Success", output: "16", turns: 4, toolCalls: 2 })
  })

  it("records failures with their tag and message", async () => {
    const lines: Array<string> = []
    const failing = agent("a").model(scriptedModel([toolCalls([{ id: "x", name: "nope", arguments: {} }])]))
    await Effect.runPromise(Effect.exit(failing.onEvent(jsonlTrace({ write: (l) => lines.push(l) })).runEffect("x")))
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      event: "RunEnd",
      outcome: "Failure",
      error: { tag: "ToolNotAllowed", message: 'Tool "nope" is not available for skill "a". Allowed: (none)' }
    })
  })

  it("appends to a file, keeps concurrent runs apart, and renders as a timeline", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "trace-")), "trace.jsonl")
    const traced = calculator().onEvent(jsonlTrace(path))
    await Promise.all([traced.run("first"), traced.run("second")])
    const content = await readFile(path, "utf8")
    const runs = new Set(content.trim().split("\n").map((l) => JSON.parse(l).run))
    expect(runs.size).toBe(2)
    const timeline = renderTrace(`${content}garbage line\n`)
    const lines = timeline.split("\n")
    expect(lines.filter((l) => l.includes("run run_"))).toHaveLength(2)
    expect(timeline).toContain('agent calculator  input "first"')
    expect(timeline).toContain("skill compute (only)")
    expect(timeline).toContain('tool add({"a":3,"b":5}) = 8')
    expect(timeline).toContain('tool multiply invalid args {"a":"8","b":2}: Expected number at ["a"]  → Feedback')
    expect(timeline).toContain('model → text "16"')
    expect(timeline).toContain("tokens 12/2")
    expect(timeline).toContain('end success "16"  (4 turns, 2 tool calls')
    expect(timeline).toContain("(1 line skipped: not trace lines)")
    expect(lines.find((l) => l.includes("turn 1"))).toMatch(/^ +\+\d+ms {4}turn 1$/)
  })

  it("has a command that prints the timeline of a trace file", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "trace-")), "trace.jsonl")
    const square = tool("square", { args: Schema.Struct({ n: Schema.Finite }), run: ({ n }) => n * n })
    await agent("sq")
      .model(scriptedModel([toolCalls([{ id: "1", name: "square", arguments: { n: 3 } }]), text("9")]))
      .tools({ square })
      .onEvent(jsonlTrace(path))
      .run("3²")
    const out = execFileSync(process.execPath, ["--import", "tsx", "src/cli/render-trace.ts", path], { encoding: "utf8" })
    expect(out).toContain("agent sq")
    expect(out).toContain('tool square({"n":3}) = 9')
    expect(out).toContain('end success "9"')
  })
})
