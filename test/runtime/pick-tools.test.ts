import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, pickTools, type PickToolsOptions, skill, text, tool } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const noArgs = Schema.Struct({})
const make = <const N extends string>(name: N, description: string, extra: { tags?: ReadonlyArray<string>; safe?: boolean } = {}) =>
  tool(name, { description, args: noArgs, run: () => name, ...extra })

const weather = make("get_weather", "Current weather for a city", { tags: ["forecast"] })
const convert = make("convert_temperature", "Convert between celsius and fahrenheit")
const email = make("send_email", "Send an email to a person", { safe: false })
const search = make("web_search", "Search the web for pages")
const all = [weather, convert, email, search]
const pick = (input: string, options: PickToolsOptions = {}) => Effect.runPromise(pickTools(input, all, options))

describe("pickTools", () => {
  it("ranks by keywords in name, tags and description, with reasons", async () => {
    const ranked = await pick("convert 20 celsius to fahrenheit")
    expect(ranked[0]).toMatchObject({ tool: convert, provenance: "scorer" })
    expect(ranked[0]!.score).toBeCloseTo(5 / 9)
    expect(ranked[0]!.reason).toBe("name: convert; description: celsius, fahrenheit")
    expect((await pick("weather forecast for Paris"))[0]!.tool).toBe(weather)
  })

  it("leaves unsafe tools out unless allowed", async () => {
    expect((await pick("send an email to Bob")).map((p) => p.tool.name)).not.toContain("send_email")
    expect((await pick("send an email to Bob", { allowUnsafe: true }))[0]!.tool).toBe(email)
  })

  it("keeps at most maxCandidates above minScore", async () => {
    expect(await pick("weather search convert celsius", { maxCandidates: 2 })).toHaveLength(2)
    expect(await pick("nothing relevant here")).toEqual([])
  })

  it("falls back to registration order when the scorer times out or fails", async () => {
    const slow = await pick("weather", { timeoutMs: 20, scorer: () => Effect.never })
    expect(slow.map((p) => [p.tool.name, p.provenance])).toEqual([
      ["get_weather", "fallback"],
      ["convert_temperature", "fallback"],
      ["web_search", "fallback"]
    ])
    expect(slow[0]!.reason).toContain("longer than 20 ms")
    const broken = await pick("weather", { scorer: () => Promise.reject(new Error("embedding service down")) })
    expect(broken[0]).toMatchObject({ provenance: "fallback", reason: expect.stringContaining("embedding service down") })
  })

  it("accepts custom scorers and clamps their scores into [0, 1]", async () => {
    const ranked = await pick("x", { scorer: (_, t) => (t === search ? 7 : -1), minScore: 0 })
    expect(ranked.map((p) => [p.tool.name, p.score])).toEqual([["web_search", 1], ["get_weather", 0], ["convert_temperature", 0]])
  })

  it("is pure: it never runs a tool", async () => {
    let runs = 0
    const counted = tool("count_things", { description: "count things", args: noArgs, run: () => ++runs })
    await Effect.runPromise(pickTools("count things", [counted]))
    expect(runs).toBe(0)
  })

  it("narrows what each model call is offered, while the allowlist still governs execution", async () => {
    const model = scriptedModel([
      { _tag: "ToolCalls", calls: [{ id: "1", name: "web_search", arguments: {} }] },
      text("done")
    ])
    const debug: Array<string> = []
    const a = agent("assistant")
      .model(model)
      .tools({ get_weather: weather, convert_temperature: convert, web_search: search })
      .skills(({ get_weather, convert_temperature, web_search }) => [skill("s").tools(get_weather, convert_temperature, web_search)])
      .pickTools({ maxCandidates: 1, debug: (line) => debug.push(line) })
    expect(await a.run("weather in Paris")).toBe("done")
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["get_weather"])
    expect(model.requests[0]!.messages[0]!.content).not.toContain("web_search")
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "tool", name: "web_search", content: "web_search" })
    expect(debug.length).toBeGreaterThan(0)
  })

  it("offers the whole allowlist when nothing scores", async () => {
    const model = scriptedModel([text("4")])
    await agent("a").model(model).tools({ get_weather: weather, web_search: search }).pickTools().run("2 + 2")
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["get_weather", "web_search"])
  })
})
