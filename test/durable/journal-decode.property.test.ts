/**
 * `decodeJournalEvent` over hostile rows (what an edited or damaged `agent_run_events` row holds, on
 * every engine): JSON of any shape, deep nesting, `__proto__` keys, a `RunEnd` without its outcome. It
 * never throws: an event the journal's readers can go by, or a `DurableRunUnreadable` naming the run
 * and the row; and every event the journal writes reads back as itself.
 */
import { fc } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { DurableRunUnreadable } from "../../src/durable/index.ts"
import { decodeJournalEvent, encodeJournalEvent } from "../../src/durable/journal-events.ts"
import { ToolFailed } from "../../src/index.ts"
import type { RunStreamEvent } from "../../src/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

const hostile = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.record({ _tag: fc.constantFrom("RunEnd", "ToolUse", "ToolError", "ApprovalRequested", "ApprovalDecided", "Turn"), runId: fc.oneof(fc.string(), fc.integer()) }, { requiredKeys: [] }),
  fc.record({ _tag: fc.constant("RunEnd"), runId: fc.string(), outcome: fc.jsonValue({ maxDepth: 3 }) }),
  fc.integer({ min: 1, max: 20_000 }).map((n) => JSON.parse(`${"[".repeat(n)}${"]".repeat(n)}`) as unknown),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(`{"__proto__":${JSON.stringify(v ?? null)},"_tag":"RunEnd","runId":"r"}`) as unknown),
  fc.constant({ _tag: "RunEnd", runId: "r9" })
)

describe("journal events read back", () => {
  it("property: a hostile row is an event or a DurableRunUnreadable naming it, never a throw", () => {
    fc.assert(
      fc.property(hostile, fc.nat(), (json, id) => {
        const read = decodeJournalEvent("r", { id, event: json })
        if (read instanceof DurableRunUnreadable) {
          expect(read).toMatchObject({ runId: "r", table: "agent_run_events", row: `event ${id}` })
          expect(read.message).toContain("agent_run_events")
          return
        }
        expect(typeof read._tag).toBe("string")
        expect(typeof read.runId).toBe("string")
        if (read._tag === "RunEnd") expect(typeof read.outcome._tag).toBe("string")
        // A `__proto__` key stays a key: nothing reaches Object.prototype.
        expect(({} as Record<string, unknown>)["_tag"]).toBeUndefined()
      }),
      { numRuns }
    )
    // The tester's row: a RunEnd without its outcome.
    const read = decodeJournalEvent("r9", { id: 3, event: { _tag: "RunEnd", runId: "r9" } })
    expect(read).toBeInstanceOf(DurableRunUnreadable)
    expect((read as DurableRunUnreadable).reason).toContain("outcome")
  })

  it("what the journal writes reads back: a run's failure as its AgentError class", () => {
    const error = new ToolFailed({ agent: "a", skill: "default", tool: "pay", args: {}, cause: "down" })
    const event = { _tag: "RunEnd", agent: "a", runId: "r", outcome: { _tag: "Failure", error }, turns: 1, toolCalls: 1, durationMs: 3 } as unknown as RunStreamEvent
    const read = decodeJournalEvent("r", { id: 1, event: encodeJournalEvent(event) })
    expect(read).not.toBeInstanceOf(DurableRunUnreadable)
    expect((read as { outcome: { error: unknown } }).outcome.error).toBeInstanceOf(ToolFailed)
  })
})
