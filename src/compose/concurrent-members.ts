/**
 * Members run at once on one input (a parallel's members, a forum's participants) and their
 * suspensions carried as one. When one or several members wait for a human decision, the composite
 * suspends as a whole: its snapshot holds every waiting member's own snapshot (`state.stage` and
 * `state.member` for the first, `state.waiting` for the others) and the outputs of those that completed
 * (`state.outputs`, as JSON), and the waiting calls are listed as `<member index>/<member's call id>`.
 * Its resume first checks every decision of every waiting member against that member's own snapshot,
 * running nothing, so a refused decision (an edit its tool's Schema does not decode, a forged entry, a
 * call without a decision) fails the whole resume before any member's approved tool runs, naming the
 * call as the composite lists it; then the waiting members continue at once, and completed members
 * are not run again.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { type Decisions, readDecisions } from "../dsl/decision.ts"
import type { PendingApproval } from "../dsl/run-outcome.ts"
import { DecisionsInvalid, SnapshotInvalid } from "../errors.ts"
import { checkMemberResume, type CompositeSnapshot, type CompositeSuspended, memberMayNeedApproval } from "./composite-snapshot.ts"
import type { Resumable, Settle } from "./composite.ts"
import type { AnyRunnable } from "./runnable.ts"

/** How members run at once: at most `concurrency`; `collect` keeps each one's success or failure as a `Result`. */
export interface ConcurrentOptions {
  readonly concurrency: number
  readonly collect: boolean
  /** What else a suspension's snapshot keeps (a forum's input), made only when the members suspend. */
  readonly keep?: () => Pick<CompositeSnapshot["state"], "input">
}

/** One member's part, once it ran: a value, a failure (collected), or a suspension. */
type Slot =
  | { readonly _tag: "Value"; readonly value: unknown }
  | { readonly _tag: "Failure"; readonly error: unknown }
  | { readonly _tag: "Waiting"; readonly pending: ReadonlyArray<PendingApproval>; readonly snapshot: unknown }

/** What members run at once end in: their values (in order), or the composite's suspension. */
export type Concurrent = { readonly values: ReadonlyArray<unknown> } | { readonly suspended: CompositeSuspended }

/** The separator of a member's call id under its index. */
const separator = "/"

/** Runs `members` on `input` at once (member `i` is the composite's member `i`). */
export const runConcurrently = (
  composite: string,
  members: ReadonlyArray<AnyRunnable>,
  input: unknown,
  options: ConcurrentOptions,
  settle: Settle
): Effect.Effect<Concurrent, unknown, unknown> =>
  Effect.flatMap(
    Effect.all(members.map((member) => runSlot(member, member.runEffect(input), options.collect)), { concurrency: options.concurrency }),
    (slots) => settleSlots(composite, slots, options, settle)
  )

/**
 * Continues members run at once from the composite's snapshot: the waiting members continue at once;
 * the completed members' outputs come back from the snapshot. `members` are the members run at once,
 * indexed as in the snapshot. The composite's resume checked every waiting member's decisions first
 * (`checkConcurrently`), before any continues.
 */
export const resumeConcurrently = (
  composite: string,
  members: ReadonlyArray<AnyRunnable>,
  snapshot: CompositeSnapshot,
  decisions: Decisions,
  options: ConcurrentOptions,
  settle: Settle
): Effect.Effect<Concurrent, unknown, unknown> =>
  Effect.gen(function*() {
    const plan = yield* resumePlan(composite, members, snapshot, decisions)
    const resumed = yield* Effect.all(
      plan.waiting.map((w) => runSlot(w.member, Effect.mapError(w.member.resume(w.snapshot, w.decisions), listedAs(w.stage)), options.collect, refusedBeforeRunning)),
      { concurrency: options.concurrency }
    )
    const slots: Array<Slot> = [...plan.slots]
    plan.waiting.forEach((w, i) => {
      slots[w.stage] = resumed[i]!
    })
    return yield* settleSlots(composite, slots, options, settle)
  })

/** Checks a resume of members run at once, running nothing: every waiting member checks its own decisions. */
export const checkConcurrently = (
  composite: string,
  members: ReadonlyArray<AnyRunnable>,
  snapshot: CompositeSnapshot,
  decisions: Decisions
): Effect.Effect<void, unknown> =>
  Effect.flatMap(resumePlan(composite, members, snapshot, decisions), (plan) =>
    Effect.forEach(plan.waiting, (w) => Effect.mapError(checkMemberResume(w.member, w.snapshot, w.decisions), listedAs(w.stage)), { discard: true }))

/**
 * A member's refusal of a decision, naming the call as the composite's pending list does
 * (`<member index>/<call id>`), so the id can be looked up in that list; `*` (the decisions as a whole) stays.
 */
const listedAs = (stage: number) => (error: unknown): unknown => {
  if (!isDecisionsInvalid(error) || error.toolCallId === "*") return error
  return new DecisionsInvalid({ agent: error.agent, toolCallId: `${stage}${separator}${error.toolCallId}`, reason: error.reason })
}

/** By its tag, as the other refusals are told (`refusedBeforeRunning`): a member may come from another copy of the library. */
const isDecisionsInvalid = (error: unknown): error is DecisionsInvalid =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "DecisionsInvalid" &&
  typeof (error as { toolCallId?: unknown }).toolCallId === "string"

/** True when a snapshot's suspension is one of members run at once (its waiting ids are prefixed). */
export const isConcurrentSuspension = (snapshot: CompositeSnapshot): boolean =>
  snapshot.state.outputs !== undefined || snapshot.state.waiting !== undefined || snapshot.state.failures !== undefined

/**
 * Refusals of a member's resume (nothing of it ran): the composite's resume fails with them, even when
 * collecting, so a second resume of a consumed snapshot is refused rather than collected as a failure.
 */
const refusedBeforeRunning = (error: unknown): boolean =>
  typeof error === "object" && error !== null &&
  ["SnapshotAlreadyResumed", "DecisionsInvalid", "SnapshotRejected", "SnapshotInvalid", "DefinitionChanged"].includes(String((error as { _tag?: unknown })._tag))

const runSlot = (
  member: AnyRunnable,
  run: Effect.Effect<unknown, unknown, unknown>,
  collect: boolean,
  propagate: (error: unknown) => boolean = () => false
): Effect.Effect<Slot, unknown, unknown> => {
  const slot = (result: unknown): Slot => {
    if (memberMayNeedApproval(member) && isSuspension(result)) return { _tag: "Waiting", pending: result.pending, snapshot: result.snapshot }
    return { _tag: "Value", value: memberMayNeedApproval(member) ? (result as { readonly output: unknown }).output : result }
  }
  return collect
    ? Effect.flatMap(Effect.result(run), (r): Effect.Effect<Slot, unknown> =>
      Result.isSuccess(r) ? Effect.succeed(slot(r.success)) : propagate(r.failure) ? Effect.fail(r.failure) : Effect.succeed({ _tag: "Failure", error: r.failure }))
    : Effect.map(run, slot)
}

/** The members' parts settled; what a suspension keeps that is not JSON fails it with `SnapshotInvalid`. */
const settleSlots = (composite: string, slots: ReadonlyArray<Slot>, options: ConcurrentOptions, settle: Settle): Effect.Effect<Concurrent, SnapshotInvalid> =>
  keepingJson(() => finish(composite, slots, options, settle))

/** `make`'s value; a value it keeps (with `asJson`) that is not JSON fails it with `SnapshotInvalid`. */
export const keepingJson = <A>(make: () => A): Effect.Effect<A, SnapshotInvalid> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(make())
    } catch (error) {
      return error instanceof NotJson ? Effect.fail(new SnapshotInvalid({ issues: error.message })) : Effect.die(error)
    }
  })

const finish = (composite: string, slots: ReadonlyArray<Slot>, options: ConcurrentOptions, settle: Settle): Concurrent => {
  const collect = options.collect
  const waiting = slots.flatMap((slot, stage) => (slot._tag === "Waiting" ? [{ stage, slot }] : []))
  if (waiting.length === 0) {
    return {
      values: slots.map((slot) =>
        collect ? (slot._tag === "Failure" ? Result.fail(slot.error) : Result.succeed((slot as { readonly value: unknown }).value)) : (slot as { readonly value: unknown }).value
      )
    }
  }
  const [first, ...others] = waiting
  const pending = waiting.flatMap(({ stage, slot }) => slot.pending.map((p) => ({ ...p, id: `${stage}${separator}${p.id}` })))
  const outputs = slots.flatMap((slot, stage) => (slot._tag === "Value" ? [{ stage, output: asJson(composite, slot.value) }] : []))
  const failures = slots.flatMap((slot, stage) => (slot._tag === "Failure" ? [{ stage, error: errorJson(slot.error) }] : []))
  return {
    suspended: settle.suspend(first!.stage, { pending, snapshot: first!.slot.snapshot }, {
      waiting: others.map(({ stage, slot }) => ({ stage, member: slot.snapshot as Schema.Json })),
      outputs,
      ...(failures.length === 0 ? {} : { failures }),
      ...options.keep?.()
    })
  }
}

interface ResumePlan {
  /** The completed members' parts, from the snapshot (waiting members' places filled at resume). */
  readonly slots: ReadonlyArray<Slot>
  readonly waiting: ReadonlyArray<{ readonly stage: number; readonly member: Resumable; readonly snapshot: unknown; readonly decisions: Decisions }>
}

/**
 * What a snapshot says about members run at once, checked: every member is either waiting (one that
 * can suspend) or completed (or failed, when collecting), exactly once; every decision names a waiting
 * member's call as `<member index>/<call id>`.
 */
const resumePlan = (
  composite: string,
  members: ReadonlyArray<AnyRunnable>,
  snapshot: CompositeSnapshot,
  decisions: Decisions
): Effect.Effect<ResumePlan, SnapshotInvalid | DecisionsInvalid> =>
  Effect.gen(function*() {
    const invalid = (issues: string) => Effect.fail(new SnapshotInvalid({ issues: `${snapshot.kind} "${composite}": ${issues}` }))
    const state = snapshot.state
    const slots: Array<Slot | undefined> = members.map(() => undefined)
    const place = (stage: number, slot: Slot) => {
      if (stage >= members.length) return invalid(`it has no member ${stage}`)
      if (slots[stage] !== undefined) return invalid(`member ${stage} is listed twice`)
      slots[stage] = slot
      return Effect.void
    }
    const waitingEntries = [{ stage: state.stage, member: state.member }, ...(state.waiting ?? [])]
    for (const entry of waitingEntries) {
      yield* place(entry.stage, { _tag: "Waiting", pending: [], snapshot: entry.member })
      const member = members[entry.stage]!
      if (!memberMayNeedApproval(member) || typeof (member as { resume?: unknown }).resume !== "function") {
        return yield* invalid(`member ${entry.stage} cannot have suspended`)
      }
    }
    for (const entry of state.outputs ?? []) yield* place(entry.stage, { _tag: "Value", value: entry.output })
    for (const entry of state.failures ?? []) yield* place(entry.stage, { _tag: "Failure", error: entry.error })
    const missing = slots.findIndex((slot) => slot === undefined)
    if (missing !== -1) return yield* invalid(`member ${missing} is neither waiting nor completed`)
    // No prototype: a member's call id may be any text, `__proto__` included.
    const mine = waitingEntries.map((): Record<string, Decisions[string]> => Object.create(null))
    for (const [id, decision] of yield* entriesOf(composite, decisions)) {
      const at = id.indexOf(separator)
      // The index as the composite names it (`1`, never `01`): one call, one id.
      const stage = at > 0 && /^(?:0|[1-9]\d*)$/.test(id.slice(0, at)) ? Number(id.slice(0, at)) : undefined
      const index = stage === undefined ? -1 : waitingEntries.findIndex((entry) => entry.stage === stage)
      if (index === -1) {
        const waitingIds = waitingEntries.map((entry) => `${entry.stage}${separator}…`).join(", ")
        return yield* new DecisionsInvalid({
          agent: composite,
          toolCallId: id,
          reason: `no waiting member of ${snapshot.kind} "${composite}" has this call: its calls are named <member index>${separator}<call id> (waiting: ${waitingIds})`
        })
      }
      mine[index]![id.slice(at + 1)] = decision
    }
    return {
      slots: slots as ReadonlyArray<Slot>,
      waiting: waitingEntries.map((entry, i) => ({ stage: entry.stage, member: members[entry.stage] as Resumable, snapshot: entry.member, decisions: mine[i]! }))
    }
  })

/** The decisions' entries, read once (`readDecisions`: what is no object, or throws when read, is `DecisionsInvalid`). */
const entriesOf = (composite: string, decisions: unknown): Effect.Effect<ReadonlyArray<[string, Decisions[string]]>, DecisionsInvalid> =>
  Effect.map(readDecisions(composite, decisions), (read) => Object.entries(read))

/** True for a member's `Suspended` result. */
const isSuspension = (u: unknown): u is { readonly pending: ReadonlyArray<PendingApproval>; readonly snapshot: unknown } =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "Suspended" && "snapshot" in u &&
  Array.isArray((u as { pending?: unknown }).pending)

/** A value a suspension must keep that is not JSON. */
class NotJson extends Error {}

/**
 * A value the snapshot keeps (a completed member's output, a loop's output, a forum's input) as JSON, so
 * a resume here and one in another process see the same; a value that is not JSON (a BigInt, a cycle)
 * cannot be kept.
 */
export const asJson = (composite: string, value: unknown): Schema.Json => {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? null : (JSON.parse(text) as Schema.Json)
  } catch (error) {
    throw new NotJson(`the snapshot of "${composite}" cannot be taken: what it must keep of a member that completed (or its input) is not JSON (${String(error)})`)
  }
}

/** A collected failure as JSON: its `_tag`, `message` and own fields. */
const errorJson = (error: unknown): Schema.Json => {
  if (typeof error !== "object" || error === null) return asJson("", { message: String(error) })
  const { _tag, message } = error as { readonly _tag?: unknown; readonly message?: unknown }
  try {
    return JSON.parse(JSON.stringify({ ...error, _tag, message: typeof message === "string" ? message : String(error) })) as Schema.Json
  } catch {
    return { _tag: typeof _tag === "string" ? _tag : "Error", message: typeof message === "string" ? message : String(error) }
  }
}
