/** Types of `d.follow`, `d.journal` and `handOverWait` (checked by tsc; the assertions run as no-ops). */
import type { Effect, Stream } from "effect"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import { describe, expectTypeOf, it } from "vitest"
import { agent, type InputInvalid, type RunStreamEvent, type ToolEffectClass } from "../../src/index.ts"
import { type ApprovalInbox, durable, type DurableEvent, type DurableJournal, type DurableRunUnreadable, type JournalEntry, type RunJournal, type RunJournalFailed, type ToolIntents } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const d = durable(agent("a").model(scriptedModel([])), { handOverWait: "30 seconds" })

describe("durable streaming and journal types", () => {
  it("follow is a Stream of { id, event } needing the engine and the journal", () => {
    expectTypeOf(d.follow("r")).toEqualTypeOf<Stream.Stream<DurableEvent, RunJournalFailed | DurableRunUnreadable | InputInvalid, WorkflowEngine | RunJournal>>()
    expectTypeOf<DurableEvent["id"]>().toEqualTypeOf<number>()
    expectTypeOf<DurableEvent["event"]>().toEqualTypeOf<RunStreamEvent>()
    // @ts-expect-error `after` is an event id (a number), not a string
    d.follow("r", { after: "7" })
  })

  it("journal is typed steps; a ToolCalled entry carries its effect class", () => {
    expectTypeOf(d.journal("r")).toEqualTypeOf<Effect.Effect<DurableJournal, DurableRunUnreadable, RunJournal | ToolIntents | ApprovalInbox>>()
    const effectOf = (entry: JournalEntry) => (entry._tag === "ToolCalled" ? entry.effect : undefined)
    expectTypeOf(effectOf).returns.toEqualTypeOf<ToolEffectClass | "unknown" | undefined>()
  })

  it("handOverWait is a duration", () => {
    // @ts-expect-error a boolean is no duration
    const bad = () => durable(agent("b").model(scriptedModel([])), { handOverWait: true })
    expectTypeOf(bad).toBeFunction()
  })
})
