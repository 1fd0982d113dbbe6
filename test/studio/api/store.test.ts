import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { agent, jsonlTrace, text, tool, toolCalls } from "../../../src/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { RunStore, type Studio, startStudio } from "../../../src/studio/index.ts"
import { Schema } from "effect"
import { call } from "./support.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)
let dir: string
let studio: Studio | undefined
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "studio-store-"))
})
afterEach(async () => {
  await studio?.close()
  studio = undefined
  rmSync(dir, { recursive: true, force: true })
})

const runEvents = (runId: string, at: number, padding = "") => [
  { _tag: "RunStart", runId, agent: "a", input: padding },
  { _tag: "Turn", runId, agent: "a", skill: "a", turn: 1 },
  { _tag: "RunEnd", runId, agent: "a", outcome: { _tag: "Success", output: "ok" }, turns: 1, toolCalls: 0, durationMs: 3 }
].map((event, i) => ({ at: at + i, event }))

describe("the studio's run store", () => {
  it("survives a studio restart: runs come back from the file with their events and status", async () => {
    const file = join(dir, "runs.jsonl")
    studio = await startStudio({ port: 0, storeFile: file })
    await call(studio, "POST", "/api/ingest", { events: runEvents("run_a", 1000) })
    await studio.close()
    studio = await startStudio({ port: 0, storeFile: file })
    const runs = (await call(studio, "GET", "/api/runs")).body
    expect(runs).toEqual([expect.objectContaining({ runId: "run_a", status: "completed", source: "ingest", startedAt: 1000, durationMs: 3 })])
    expect((await call(studio, "GET", "/api/runs/run_a")).body.events).toHaveLength(3)
  })

  it("keeps at most maxRuns, evicting the oldest, and the file stays bounded across restarts", async () => {
    const file = join(dir, "runs.jsonl")
    const store = new RunStore({ file, maxRuns: 3 })
    for (let i = 0; i < 50; i++) for (const { at, event } of runEvents(`run_${i}`, i * 10)) store.append("ingest", at, event)
    store.flush()
    expect(store.runs().map((r) => r.runId)).toEqual(["run_47", "run_48", "run_49"])
    const reopened = new RunStore({ file, maxRuns: 3 })
    expect(reopened.runs().map((r) => r.runId)).toEqual(["run_47", "run_48", "run_49"])
    // Compacted at load: only the kept runs' lines remain.
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(9)
  })

  it("evicts by size: the events kept stay under maxBytes", () => {
    const store = new RunStore({ maxBytes: 10_000 })
    for (let i = 0; i < 40; i++) for (const { at, event } of runEvents(`run_${i}`, i, "x".repeat(1000))) store.append("ingest", at, event)
    expect(store.bytes).toBeLessThanOrEqual(10_000)
    expect(store.runs().at(-1)!.runId).toBe("run_39")
    expect(store.size).toBeLessThan(40)
  })

  it("property: whatever the events, runs ≤ maxRuns, bytes ≤ maxBytes (beyond one run), and the newest run is kept", () => {
    const arbEvent = fc.record({
      run: fc.integer({ min: 0, max: 30 }),
      tag: fc.constantFrom("RunStart", "Turn", "TextDelta", "RunEnd", "ToolUse", "__proto__", "constructor", ""),
      payload: fc.oneof(fc.string({ maxLength: 400 }), fc.jsonValue({ maxDepth: 3 }), fc.constant("\u2028\u0000\ud800"))
    })
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 200, max: 20_000 }), fc.array(arbEvent, { maxLength: 120 }), (maxRuns, maxBytes, events) => {
        const store = new RunStore({ maxRuns, maxBytes })
        let last: string | undefined
        for (const [i, e] of events.entries()) {
          const stored = store.append("ingest", i, { _tag: e.tag || "Turn", runId: `run_${e.run}`, agent: "a", payload: e.payload as never })
          if (stored !== undefined) last = `run_${e.run}`
          expect(store.size).toBeLessThanOrEqual(maxRuns)
          if (store.size > 1) expect(store.bytes).toBeLessThanOrEqual(maxBytes)
          expect(store.bytes).toBe(store.runs().reduce((n, r) => n + r.bytes, 0))
        }
        if (last !== undefined) expect(store.get(last)).toBeDefined()
        for (const run of store.runs()) expect(store.facts(run).summary.runId).toBe(run.runId)
      }),
      { numRuns }
    )
  })

  it("property: a run waiting for a decision is never evicted while it waits; the others stay within the bounds", () => {
    const arbEvent = fc.record({
      run: fc.integer({ min: 0, max: 20 }),
      payload: fc.oneof(fc.string({ maxLength: 400 }), fc.jsonValue({ maxDepth: 3 }))
    })
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 200, max: 5_000 }), fc.array(arbEvent, { maxLength: 100 }), fc.uniqueArray(fc.integer({ min: 0, max: 20 }), { maxLength: 8 }), (maxRuns, maxBytes, events, waitingRuns) => {
        const waiting = new Set(waitingRuns.map((n) => `run_${n}`))
        const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {})
        try {
          const store = new RunStore({ maxRuns, maxBytes, isWaiting: (run) => waiting.has(run.runId) })
          const seen = new Set<string>()
          let last = ""
          for (const [i, e] of events.entries()) {
            last = `run_${e.run}`
            store.append("ingest", i, { _tag: "Turn", runId: last, agent: "a", payload: e.payload as never })
            seen.add(last)
            for (const id of seen) if (waiting.has(id)) expect(store.get(id)).toBeDefined()
            expect(store.get(last)).toBeDefined()
            // Over a bound only when every run but the newest waits.
            const evictable = store.runs().filter((r) => !waiting.has(r.runId) && r.runId !== last)
            if (store.size > maxRuns || (store.bytes > maxBytes && store.size > 1)) expect(evictable).toEqual([])
          }
        } finally {
          warn.mockRestore()
        }
      }),
      { numRuns }
    )
  })

  it("with only waiting runs left over the bounds, keeps them and says so once; a run that stops waiting is evicted again", () => {
    const file = join(dir, "runs.jsonl")
    const waiting = new Set(["w_1", "w_2"])
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {})
    try {
      const store = new RunStore({ file, maxRuns: 1, isWaiting: (run) => waiting.has(run.runId) })
      store.append("studio", 1, { _tag: "RunStart", runId: "w_1", agent: "a" })
      store.append("studio", 2, { _tag: "RunStart", runId: "w_2", agent: "a" })
      store.append("ingest", 3, { _tag: "RunStart", runId: "app_1", agent: "a" })
      store.append("ingest", 4, { _tag: "RunStart", runId: "app_2", agent: "a" })
      expect(store.runs().map((r) => r.runId)).toEqual(["w_1", "w_2", "app_2"])
      expect(warn).toHaveBeenCalledTimes(1)
      expect(String(warn.mock.calls[0]![0])).toMatch(/waiting for a decision are never evicted; decide or stop them/)
      store.flush()
      // Read back from the file: the waiting runs are kept at load too.
      expect(new RunStore({ file, maxRuns: 1, isWaiting: (run) => waiting.has(run.runId) }).runs().map((r) => r.runId)).toEqual(["w_1", "w_2", "app_2"])
      waiting.delete("w_1")
      store.append("ingest", 5, { _tag: "RunEnd", runId: "app_2", agent: "a" })
      expect(store.runs().map((r) => r.runId)).toEqual(["w_2", "app_2"])
    } finally {
      warn.mockRestore()
    }
  })

  it("evicts the run whose last event is the oldest: a run still under way outlives shorter ones that started after it", () => {
    const store = new RunStore({ maxRuns: 2 })
    store.append("ingest", 1, { _tag: "RunStart", runId: "long", agent: "a" })
    store.append("ingest", 2, { _tag: "RunStart", runId: "short_1", agent: "a" })
    store.append("ingest", 3, { _tag: "Turn", runId: "long", agent: "a" })
    store.append("ingest", 4, { _tag: "RunStart", runId: "short_2", agent: "a" })
    expect(store.runs().map((r) => r.runId)).toEqual(["long", "short_2"])
    // Found by the property above (seed 1499661840): the run an event was just stored for was evicted by it.
    const bounded = new RunStore({ maxRuns: 2, maxBytes: 213 })
    bounded.append("ingest", 0, { _tag: "ToolUse", runId: "run_15", agent: "a", payload: "" as never })
    bounded.append("ingest", 1, { _tag: "RunStart", runId: "run_0", agent: "a", payload: " \u0000\ud800" as never })
    bounded.append("ingest", 2, { _tag: "RunStart", runId: "run_15", agent: "a", payload: {} as never })
    expect(bounded.get("run_15")?.events).toHaveLength(2)
    expect(bounded.bytes).toBeLessThanOrEqual(213)
  })

  it("keeps its file readable by its owner only (it holds run inputs, model text and tool arguments)", () => {
    const file = join(dir, "private", "runs.jsonl")
    const store = new RunStore({ file })
    for (const { at, event } of runEvents("run_p", 1)) store.append("ingest", at, event)
    store.flush()
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, "private")).mode & 0o777).toBe(0o700)
    store.compact()
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it("survives a torn last line (a crash mid-write)", () => {
    const file = join(dir, "runs.jsonl")
    const store = new RunStore({ file })
    for (const { at, event } of runEvents("run_a", 1)) store.append("ingest", at, event)
    store.flush()
    writeFileSync(file, `${readFileSync(file, "utf8")}{"run":"run_b","sou`)
    expect(new RunStore({ file }).runs().map((r) => r.runId)).toEqual(["run_a"])
  })

  it("starts from a hand-edited file: lines that are JSON but not a stored event (null, a number, a string, no source, an infinite time) are skipped", () => {
    const file = join(dir, "runs.jsonl")
    const good = JSON.stringify({ run: "run_ok", source: "ingest", id: 1, at: 5, event: { _tag: "RunStart", runId: "run_ok", agent: "a" } })
    const bad = ["null", "42", "\"text\"", "true", "[]", "{\"drop\":null}",
      JSON.stringify({ run: "run_nosource", id: 1, at: 1, event: { _tag: "RunStart", runId: "run_nosource", agent: "a" } }),
      JSON.stringify({ run: "run_source", source: "elsewhere", id: 1, at: 1, event: { _tag: "RunStart", runId: "run_source", agent: "a" } }),
      `{"run":"run_infinite","source":"ingest","id":1,"at":1e999,"event":{"_tag":"RunStart","runId":"run_infinite","agent":"a"}}`]
    writeFileSync(file, `${bad.join("\n")}\n${good}\n`)
    const store = new RunStore({ file })
    expect(store.runs().map((r) => [r.runId, r.source])).toEqual([["run_ok", "ingest"]])
    // Compacted at load: the file keeps the good line only.
    expect(readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line).run)).toEqual(["run_ok"])
  })

  it("a file it cannot rewrite (disk full, a folder in the way) costs a warning, never the studio: loading and compacting go on with the runs in memory", () => {
    const file = join(dir, "runs.jsonl")
    for (const { at, event } of runEvents("run_a", 1)) appendFileSync(file, `${JSON.stringify({ run: "run_a", source: "ingest", id: 1, at, event })}\n`)
    // The compaction writes a temporary file next to the store's, then renames it: make that write fail.
    mkdirSync(`${file}.${process.pid}.tmp`)
    const warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined)
    try {
      const store = new RunStore({ file, maxBytes: 2_000 })
      expect(store.runs().map((r) => r.runId)).toEqual(["run_a"])
      // Far more than is kept: the flush appends, then tries to compact.
      for (let i = 0; i < 60; i++) for (const { at, event } of runEvents(`run_${i}`, 10 + i * 10, "x".repeat(20_000))) store.append("ingest", at, event)
      expect(() => store.flush()).not.toThrow()
      expect(statSync(file).size).toBeGreaterThan(1024 * 1024)
      expect(store.runs().at(-1)!.runId).toBe("run_59")
      expect(warnings.mock.calls.some(([message]) => String(message).includes("cannot rewrite"))).toBe(true)
    } finally {
      warnings.mockRestore()
    }
    rmSync(`${file}.${process.pid}.tmp`, { recursive: true })
    // Nothing was lost: the next start reads the appended file and compacts it.
    expect(new RunStore({ file, maxBytes: 2_000 }).runs().at(-1)!.runId).toBe("run_59")
    expect(statSync(file).size).toBeLessThan(100_000)
  })

  it("refuses bounds that are not positive", () => {
    expect(() => new RunStore({ maxRuns: 0 })).toThrow(/maxRuns/)
    expect(() => new RunStore({ maxBytes: Number.NaN })).toThrow(/maxBytes/)
  })
})

describe("JSON Lines traces", () => {
  it("a trace written by jsonlTrace becomes a run with its turns, tools, tokens and outcome; importing again replaces it", async () => {
    const trace = join(dir, "trace.jsonl")
    const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
    await agent("calc")
      .model(scriptedModel([
        { ...toolCalls([{ name: "add", arguments: { a: 1, b: 2 } }]), usage: { inputTokens: 10, outputTokens: 2 } },
        { ...text("3"), usage: { inputTokens: 12, outputTokens: 1 } }
      ]))
      .tools({ add })
      .onEvent(jsonlTrace(trace))
      .run("1 + 2")
    writeFileSync(trace, `${readFileSync(trace, "utf8")}not json\n{"v":2}\n`, "utf8")
    studio = await startStudio({ port: 0, traces: [trace] })
    const [summary] = (await call(studio, "GET", "/api/runs")).body
    expect(summary).toMatchObject({ agent: "calc", source: "trace", status: "completed", turns: 2, tokens: { input: 22, output: 3, total: 25 } })
    const detail = (await call(studio, "GET", `/api/runs/${summary.runId}`)).body
    expect(detail.requests.map((r: any) => [r.tools, r.messages, r.finishReason])).toEqual([[["add"], 2, "tool-calls"], [["add"], 4, "stop"]])
    expect(detail.events.find((e: any) => e.event._tag === "ToolUse").event).toMatchObject({ tool: "add", args: { a: 1, b: 2 }, result: 3 })
    expect(detail.output).toBe("3")
    const again = await call(studio, "POST", "/api/import", { jsonl: readFileSync(trace, "utf8") })
    expect(again.body).toEqual({ runs: [summary.runId], skipped: 2, kept: [] })
    expect((await call(studio, "GET", `/api/runs/${summary.runId}`)).body.events).toHaveLength(detail.events.length)
  })
})
