/**
 * The journal law behind `d.follow`: however a run's executions are cut short (crashes at any event)
 * and replayed, and whatever live-only events (retries, a child's events) happen in between, the
 * journal holds the run's events exactly once, in the order of an uncrashed run, with ids 1, 2, …
 * without a gap; live-only events are all kept. Hostile generators: repeated tags on the same tool
 * call, call ids that look like keys (`#`, `/`), empty ids.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import type { RunStreamEvent } from "../../src/index.ts"
import { RunJournal } from "../../src/durable/index.ts"
import { InStep, journalSink } from "../../src/durable/journal-events.ts"

const callId = fc.constantFrom("c1", "c2", "c#1", "c/2", "", "ToolUse")
const planned = fc.array(
  fc.record({ tag: fc.constantFrom("Turn", "ModelResponse", "ToolUse", "ToolError", "ApprovalRequested", "ApprovalDecided"), callId }),
  { minLength: 1, maxLength: 30 }
)
/** Cut points of the executions before the last (each a crash after that many events), and live events per execution. */
const executions = fc.array(fc.record({ cut: fc.nat(), live: fc.nat({ max: 3 }) }), { maxLength: 5 })

describe("the run journal", () => {
  test.prop([planned, executions])("holds a replayed run's events once, in order, ids 1..n; live events all kept", async (events, crashes) => {
    const out = await Effect.gen(function*() {
      const journal = yield* RunJournal
      let liveCount = 0
      const execute = (upTo: number, live: number) =>
        Effect.gen(function*() {
          const known = yield* journal.keys("r")
          const { sink } = journalSink(journal, "r", known)
          for (let i = 0; i < upTo; i++) {
            const e = events[i]!
            const event = { _tag: e.tag, agent: "a", runId: "r", turn: 1, toolCallId: e.callId, n: i } as unknown as RunStreamEvent
            yield* sink(event)
            if (i === 0) {
              for (let k = 0; k < live; k++) {
                liveCount += 1
                yield* Effect.provideService(sink({ _tag: "Retrying", agent: "a", runId: "r", turn: 1, n: -liveCount } as unknown as RunStreamEvent), InStep, true)
              }
            }
          }
        })
      for (const crash of crashes) yield* execute(Math.min(crash.cut, events.length), crash.live)
      yield* execute(events.length, 0)
      return { records: yield* journal.read("r", 0, 10_000), liveCount }
    }).pipe(Effect.provide(RunJournal.memory), Effect.runPromise)
    const ids = out.records.map((r) => r.id)
    expect(ids).toEqual(ids.map((_, i) => i + 1))
    const ns = out.records.map((r) => (r.event as { n: number }).n)
    expect(ns.filter((n) => n >= 0)).toEqual(events.map((_, i) => i))
    expect(ns.filter((n) => n < 0)).toHaveLength(out.liveCount)
  })
})
