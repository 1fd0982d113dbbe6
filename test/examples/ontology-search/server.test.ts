// The search over HTTP: SSE progress then the SearchResult event; the page; bad requests.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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

  it("serves the page, and refuses an empty or missing question", async () => {
    const page = await (await fetch(server.url)).text()
    expect(page).toContain("new EventSource")
    expect(page).not.toContain("innerHTML")
    expect((await fetch(`${server.url}/search?q=`)).status).toBe(400)
    expect((await fetch(`${server.url}/search?q=${"x".repeat(1001)}`)).status).toBe(400)
    expect((await fetch(`${server.url}/nope`)).status).toBe(404)
  })
})
