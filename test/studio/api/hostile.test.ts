/**
 * Hostile requests: whatever JSON (or not-JSON) a client posts to any endpoint, and whatever it puts in
 * the query and the path, the studio answers a documented 2xx/4xx with a JSON body, never a 500, and
 * keeps working.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Studio, startStudio } from "../../../src/studio/index.ts"
import { call, testAgents } from "./support.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 60)
let studio: Studio
beforeAll(async () => {
  studio = await startStudio({ agents: testAgents().agents, port: 0, maxBodyBytes: 64 * 1024 })
})
afterAll(() => studio.close())

const arbBody = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.record({ input: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ decisions: fc.array(fc.record({ callId: fc.oneof(fc.string(), fc.integer()), decision: fc.constantFrom("approve", "deny", "edit", "maybe", ""), reason: fc.oneof(fc.string(), fc.integer()), arguments: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }), { maxLength: 3 }), decidedBy: fc.oneof(fc.string(), fc.integer()) }, { requiredKeys: [] }),
  fc.record({ events: fc.array(fc.record({ at: fc.oneof(fc.double(), fc.integer(), fc.string()), event: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.record({ _tag: fc.string(), runId: fc.oneof(fc.string(), fc.integer()) })) }, { requiredKeys: [] }), { maxLength: 5 }) }, { requiredKeys: [] }),
  fc.record({ jsonl: fc.string() })
)

const arbSegment = fc.oneof(fc.constantFrom("run_x", "calculator", "..", "%2e%2e", "__proto__", "constructor"), fc.string({ maxLength: 12 }).map(encodeURIComponent))

describe("the studio API under hostile requests", () => {
  it("property: any body to any POST endpoint gets a JSON 2xx/4xx answer, never a 500", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/api/agents/calculator/runs", "/api/agents/{x}/runs", "/api/approvals/{x}", "/api/runs/{x}/stop", "/api/ingest", "/api/import"),
        arbSegment,
        fc.oneof(arbBody.map((b) => JSON.stringify(b)), fc.string({ maxLength: 200 })),
        async (route, segment, body) => {
          const { status, body: answer } = await call(studio, "POST", route.replace("{x}", segment), body, { "content-type": "application/json" })
          expect(status).toBeGreaterThanOrEqual(200)
          expect(status).toBeLessThan(500)
          expect(typeof answer).toBe("object")
          if (status >= 400) expect(typeof answer.error).toBe("string")
        }
      ),
      { numRuns }
    )
  })

  it("property: any query and path under GET answer JSON, never a 500", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/api/runs", "/api/runs/{x}", "/api/sessions/{x}", "/api/approvals", "/api/agents", "/api/{x}"),
        arbSegment,
        fc.dictionary(fc.constantFrom("status", "agent", "limit", "source", "parent", "token2"), fc.string({ maxLength: 10 })),
        async (route, segment, query) => {
          const search = new URLSearchParams(query).toString()
          const path = `${route.replace("{x}", segment)}${search === "" ? "" : `?${search}`}`
          const { status, body } = await call(studio, "GET", path)
          expect(status).toBeLessThan(500)
          // A dot segment leaves /api/ in the client already (the page is served there).
          if (new URL(path, studio.origin).pathname.startsWith("/api/")) expect(typeof body).toBe("object")
        }
      ),
      { numRuns }
    )
  })

  it("events and trace lines of any shape never break the run list (a null response or message, deep nesting, a tag or pending of the wrong type)", async () => {
    // Deeper than JSON.stringify goes (it is written by hand: the test could not stringify it either).
    const deep = `${"[".repeat(30_000)}${"]".repeat(30_000)}`
    const events = [
      JSON.stringify({ at: 1, event: { _tag: "ModelResponse", runId: "h_null", agent: "a", response: null } }),
      JSON.stringify({ at: 2, event: { _tag: "ModelCall", runId: "h_messages", agent: "a", request: { messages: [null, 1], tools: [null] } } }),
      `{"at":3,"event":{"_tag":"RunStart","runId":"h_deep","agent":"a","input":${deep}}}`
    ]
    const ingest = await call(studio, "POST", "/api/ingest", `{"events":[${events.join(",")}]}`)
    expect(ingest.status).toBe(202)
    const lines = [
      { v: 1, ts: 1, run: "h_trace", agent: "a", event: "RunEnd", outcome: "Suspended", pending: "x" },
      { v: 1, ts: 2, run: "h_tag", agent: "a", event: "ModelCall", _tag: 42, request: { messages: [null] } },
      { v: 1, ts: 3, run: "h_null", agent: "a", event: "RunStart" }
    ]
    const imported = await call(studio, "POST", "/api/import", { jsonl: lines.map((l) => JSON.stringify(l)).join("\n") })
    expect(imported.status).toBe(200)
    // An ingested run is not replaced by a trace of the same id.
    expect(imported.body).toEqual({ runs: ["h_trace", "h_tag"], skipped: 0, kept: ["h_null"] })
    const runs = await call(studio, "GET", "/api/runs")
    expect(runs.status).toBe(200)
    expect(runs.body.map((r: any) => r.runId)).toEqual(expect.arrayContaining(["h_null", "h_messages", "h_deep", "h_trace", "h_tag"]))
    for (const runId of ["h_null", "h_messages", "h_deep", "h_trace", "h_tag"]) expect((await call(studio, "GET", `/api/runs/${runId}`)).status).toBe(200)
  })

  it("a path that is not valid percent-encoding, and two decisions for one call, are refused with 400", async () => {
    expect((await call(studio, "GET", "/api/runs/%E0%A4%A")).status).toBe(400)
    const twice = await call(studio, "POST", "/api/approvals/run_x", { decisions: [{ callId: "c1", decision: "approve" }, { callId: "c1", decision: "deny" }] })
    expect(twice.status).toBe(400)
  })

  it("a run id with a lone surrogate is stored well-formed (U+FFFD in its place), so its run can be opened by URL, and its children are linked", async () => {
    const events = [
      { at: 1, event: { _tag: "RunStart", runId: "lone-\ud800-parent", agent: "a" } },
      { at: 2, event: { _tag: "RunStart", runId: "lone-\udc00-child", parentRunId: "lone-\ud800-parent", agent: "b" } }
    ]
    expect((await call(studio, "POST", "/api/ingest", events)).status).toBe(400)
    expect((await call(studio, "POST", "/api/ingest", { events })).body).toEqual({ accepted: 2 })
    const detail = await call(studio, "GET", `/api/runs/${encodeURIComponent("lone-\ufffd-parent")}`)
    expect(detail.status).toBe(200)
    expect(detail.body.children).toEqual(["lone-\ufffd-child"])
    expect((await call(studio, "GET", `/api/runs/${encodeURIComponent("lone-\ufffd-child")}`)).body.summary.parentRunId).toBe("lone-\ufffd-parent")
  })

  it("a body over the limit is refused with 413, and the studio still answers", async () => {
    const big = JSON.stringify({ events: [{ at: 1, event: { _tag: "RunStart", runId: "run_big", agent: "a", input: "x".repeat(100 * 1024) } }] })
    expect((await call(studio, "POST", "/api/ingest", big)).status).toBe(413)
    expect((await call(studio, "GET", "/api/agents")).status).toBe(200)
  })

  it.each([1, 3, 16])("a body of %i MiB over the limit, streamed by fetch, gets the 413, not a reset connection", async (mebibytes) => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024))
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < mebibytes * 16) controller.enqueue(chunk)
        else controller.close()
      }
    })
    const response = await fetch(`${studio.origin}/api/ingest`, {
      method: "POST",
      body,
      duplex: "half",
      headers: { authorization: `Bearer ${studio.token}`, "content-type": "application/json" }
    } as RequestInit)
    expect(response.status).toBe(413)
    expect(await response.json()).toMatchObject({ error: "BodyTooLarge" })
    expect((await call(studio, "GET", "/api/agents")).status).toBe(200)
  })
})
