// The search over HTTP: SSE progress then the SearchResult event; the page; bad requests.
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ModelClient, toolCalls } from "effect-agent-dsl"
import { SUBMIT_SLOTS } from "../../../examples/ontology-search/forced-choice.ts"
import { startSearchServer } from "../../../examples/ontology-search/server.ts"
import { standInModel } from "../../../examples/ontology-search/stand-in-model.ts"

const frames = (text: string) =>
  text.split("\n\n").filter((f) => f.trim() !== "").map((f) => ({
    event: /^event: (.*)$/m.exec(f)?.[1],
    data: JSON.parse(/^data: (.*)$/m.exec(f)?.[1] ?? "null") as Record<string, any>
  }))

let server: Awaited<ReturnType<typeof startSearchServer>>
beforeAll(async () => {
  server = await startSearchServer(0, { client: standInModel(), maxSteps: 3 })
})
afterAll(() => server.close())

describe("search server", () => {
  it("streams the run's progress, then the corrected slots and the hits", async () => {
    const res = await fetch(`${server.url}/search?q=${encodeURIComponent("rainy night scenarios on a highway")}`)
    expect(res.headers.get("content-type")).toContain("text/event-stream")
    const events = frames(await res.text())
    const tags = events.map((e) => e.event)
    expect(tags[0]).toBe("RunStart")
    expect(tags.indexOf("RunEnd")).toBeLessThan(tags.indexOf("SearchResult"))
    expect(tags.at(-1)).toBe("SearchResult")
    const result = events.at(-1)!.data
    expect(result.slots.corrections).toContainEqual({ slot: "filters.roadTypes", from: "motoway", to: "motorway", match: "fuzzy" })
    expect(result.slots.domains).toEqual(["scenario", "hdmap"])
    expect(result.total).toBeGreaterThan(0)
    expect(result.sparql).toContain("SELECT DISTINCT ?asset ?domain")
  })

  it("answers another method than GET with 405, running nothing", async () => {
    const res = await fetch(`${server.url}/search?q=${encodeURIComponent("motorway maps")}`, { method: "POST", body: "{}" })
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe("GET, HEAD")
  })

  it("serves the page, and refuses an empty or missing question", async () => {
    const page = await (await fetch(server.url)).text()
    expect(page).toContain("new EventSource")
    expect(page).not.toContain("innerHTML")
    expect((await fetch(`${server.url}/search?q=`)).status).toBe(400)
    expect((await fetch(`${server.url}/search?q=${"x".repeat(1001)}`)).status).toBe(400)
    expect((await fetch(`${server.url}/nope`)).status).toBe(404)
  })

  it("the README's Over HTTP section says what the stream carries: the events, and submit_slots under the name the model sees", async () => {
    const readme = readFileSync(new URL("../../../examples/ontology-search/README.md", import.meta.url), "utf8")
    const section = readme.split("## Over HTTP")[1]!.split("\n## ")[0]!
    const events = frames(await (await fetch(`${server.url}/search?q=${encodeURIComponent("motorway maps")}`)).text())
    const tags = events.map((e) => e.event)
    for (const tag of ["RunStart", "Turn", "ToolCallStart", "ModelResponse", "RunEnd", "SearchResult"]) {
      expect(section).toContain(`\`${tag === "RunStart" || tag === "SearchResult" ? `event: ${tag}` : tag}\``)
      expect(tags).toContain(tag)
    }
    const called = events.filter((e) => e.event === "ToolCallStart").map((e) => e.data.tool)
    expect(called).toEqual([SUBMIT_SLOTS])
    expect(/typed-answer call appears as `(\w+)`/.exec(section)?.[1]).toBe(SUBMIT_SLOTS)
  })

  it("AI_PROVIDER set but empty or blank is no provider: the stand-in answers (the environment is not refused)", async () => {
    const before = process.env.AI_PROVIDER
    try {
      for (const provider of ["", "  "]) {
        process.env.AI_PROVIDER = provider
        const blank = await startSearchServer(0)
        try {
          const events = frames(await (await fetch(`${blank.url}/search?q=${encodeURIComponent("motoway maps")}`)).text())
          expect(events.at(-1)!.event).toBe("SearchResult")
          expect(events.at(-1)!.data.slots.corrections).toContainEqual({ slot: "filters.roadTypes", from: "motoway", to: "motorway", match: "fuzzy" })
        } finally {
          await blank.close()
        }
      }
    } finally {
      if (before === undefined) delete process.env.AI_PROVIDER
      else process.env.AI_PROVIDER = before
    }
  })

  it("a run that ends without slots ends its stream with RunEnd (a Failure) and an error event, and no SearchResult", async () => {
    const never = await startSearchServer(0, { client: ModelClient.fromFunction(() => toolCalls([{ name: SUBMIT_SLOTS, arguments: "{not json" }])), maxSteps: 2 })
    try {
      const events = frames(await (await fetch(`${never.url}/search?q=maps`)).text())
      expect(events.slice(-2).map((e) => e.event)).toEqual(["RunEnd", "error"])
      expect(events.at(-2)!.data.outcome._tag).toBe("Failure")
      expect(events.at(-1)!.data._tag).toBe("OutputInvalid")
    } finally {
      await never.close()
    }
  })
})
