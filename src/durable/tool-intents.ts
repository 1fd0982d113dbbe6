/**
 * Intents of `mutating` tool calls: before a durable run executes a mutating tool it claims the
 * call's intent, and the claim is committed before the tool runs; when the tool ends, its outcome is
 * written beside the claim. A claim names its owner (the worker running the call) and holds a lease
 * the owner renews while the call runs. A replay that finds a claim without an outcome waits while the
 * lease lives (the owner still works: a shard moved while the call ran); when the lease expired, or
 * the owner is known dead, it takes the claim over and the call goes to reconciliation instead of
 * running again. An outcome written but not yet recorded by the workflow engine (the worker died just
 * after the tool, or finished after the run moved) is read back instead: no reconciliation needed.
 *
 * `ToolIntents.memory` keeps them in this process (tests, the in-memory engine); `toolIntentsSql`
 * (`sql-store.ts`) in a table of the engine's database.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type { DurableRunUnreadable } from "./run-unreadable.ts"

/**
 * What is known of a claimed intent: no outcome yet (`Claimed`: who claimed it, and whether their
 * lease still runs), or the outcome the tool ended with.
 */
export type IntentState =
  | { readonly _tag: "Claimed"; readonly owner?: string | undefined; readonly leaseLive: boolean }
  | { readonly _tag: "Finished"; readonly outcome: Schema.Json }

/**
 * Who holds a claim, and for how long without a renewal: the owner renews it while the call runs
 * (and while an interrupted call that ignores its signal still runs), so a live lease means "its
 * owner still works". Only an expired lease (or an owner known dead) lets another worker reconcile.
 */
export interface Lease {
  readonly owner: string
  readonly ms: number
}

/** One call of a mutating tool, as claimed. */
export interface Intent {
  /** Unique per call: run id, turn and call id (and its occurrence), each part encoded so that the join is one to one (`step-keys.ts`). */
  readonly key: string
  readonly runId: string
  readonly tool: string
  readonly toolCallId: string
}

/**
 * The store failed (the database is down): the step fails and, as any failed activity, ends the run.
 *
 * @example
 * ```ts
 * Effect.catchTag("ToolIntentsFailed", (e) => Effect.logError(e.reason))
 * ```
 */
export class ToolIntentsFailed extends Data.TaggedError("ToolIntentsFailed")<{
  readonly operation: "claim" | "finish" | "read" | "renew" | "open"
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `The tool intents store could not ${this.operation}: ${this.reason}`
  }
}

/**
 * Where the intents of mutating tool calls live. Every runner of a durable agent uses the same one
 * (the engine's database).
 *
 * @example
 * ```ts
 * const claimed = yield* (yield* ToolIntents).claim({ key: "run_1/2/call_1/1", runId: "run_1", tool: "pay", toolCallId: "call_1" })
 * ```
 */
export class ToolIntents extends Context.Service<ToolIntents, {
  /**
   * Claims `intent` for `lease.owner` (no lease: an owner-less claim, taken as abandoned), committed
   * when this succeeds: `None` when it is new (the caller runs the tool), else what the store knows of
   * the earlier claim.
   */
  readonly claim: (intent: Intent, lease?: Lease) => Effect.Effect<Option.Option<IntentState>, ToolIntentsFailed | DurableRunUnreadable>
  /** Writes the outcome the tool of a claimed intent ended with. */
  readonly finish: (key: string, outcome: Schema.Json) => Effect.Effect<void, ToolIntentsFailed>
  /** What the store knows of intent `key` (`None`: never claimed; `DurableRunUnreadable`: its outcome is not JSON). */
  readonly read: (key: string) => Effect.Effect<Option.Option<IntentState & Intent>, ToolIntentsFailed | DurableRunUnreadable>
  /** Extends the lease of `lease.owner` on `key` by `lease.ms` from now; `false` when it is no longer theirs (or finished). */
  readonly renew: (key: string, lease: Lease) => Effect.Effect<boolean, ToolIntentsFailed>
  /** Ends `owner`'s lease on `key` now: the call stopped without an outcome. */
  readonly release: (key: string, owner: string) => Effect.Effect<void, ToolIntentsFailed>
  /**
   * Takes an unfinished claim over from `from` (its owner as read): only when it is still theirs and
   * their lease has expired, or `ownerDead`. `true`: `lease.owner` holds it now (one taker wins).
   */
  readonly takeOver: (key: string, from: string | undefined, lease: Lease, ownerDead: boolean) => Effect.Effect<boolean, ToolIntentsFailed>
  /**
   * The claims of run `runId` and of every run whose id starts `<runId>~` (the runs it handed off to
   * among them), oldest first; `d.journal` keeps those whose keys are the run's (`step-keys.ts`).
   */
  readonly forRun: (runId: string) => Effect.Effect<ReadonlyArray<IntentState & Intent>, ToolIntentsFailed | DurableRunUnreadable>
}>()("effect-agent-dsl/durable/ToolIntents") {
  /**
   * Intents in this process's memory: for tests and the in-memory engine (a restarted process
   * forgets them, as it forgets the in-memory engine's runs).
   *
   * @example
   * ```ts
   * Effect.provide(program, Layer.mergeAll(WorkflowEngine.layerMemory, ToolIntents.memory))
   * ```
   */
  static readonly memory: Layer.Layer<ToolIntents> = Layer.sync(ToolIntents, () => {
    type Entry = Intent & { outcome?: Schema.Json; owner?: string | undefined; leaseUntil: number }
    const intents = new Map<string, Entry>()
    const stateOf = (entry: Entry): IntentState =>
      entry.outcome !== undefined
        ? { _tag: "Finished", outcome: entry.outcome }
        : { _tag: "Claimed", owner: entry.owner, leaseLive: entry.leaseUntil > Date.now() }
    return ToolIntents.of({
      claim: (intent, lease) =>
        Effect.sync(() => {
          const found = intents.get(intent.key)
          if (found !== undefined) return Option.some(stateOf(found))
          intents.set(intent.key, { key: intent.key, runId: intent.runId, tool: intent.tool, toolCallId: intent.toolCallId, owner: lease?.owner, leaseUntil: lease === undefined ? 0 : Date.now() + lease.ms })
          return Option.none()
        }),
      finish: (key, outcome) =>
        Effect.sync(() => {
          const found = intents.get(key)
          if (found !== undefined) found.outcome = outcome
        }),
      read: (key) =>
        Effect.sync(() => {
          const found = intents.get(key)
          return found === undefined
            ? Option.none()
            : Option.some({ ...stateOf(found), key: found.key, runId: found.runId, tool: found.tool, toolCallId: found.toolCallId })
        }),
      renew: (key, lease) =>
        Effect.sync(() => {
          const found = intents.get(key)
          if (found === undefined || found.outcome !== undefined || found.owner !== lease.owner) return false
          found.leaseUntil = Date.now() + lease.ms
          return true
        }),
      release: (key, owner) =>
        Effect.sync(() => {
          const found = intents.get(key)
          if (found !== undefined && found.owner === owner) found.leaseUntil = 0
        }),
      takeOver: (key, from, lease, ownerDead) =>
        Effect.sync(() => {
          const found = intents.get(key)
          if (found === undefined || found.outcome !== undefined || found.owner !== from) return false
          if (!ownerDead && found.leaseUntil > Date.now()) return false
          found.owner = lease.owner
          found.leaseUntil = Date.now() + lease.ms
          return true
        }),
      forRun: (runId) =>
        Effect.sync(() =>
          [...intents.values()]
            .filter((e) => e.runId === runId || e.runId.startsWith(`${runId}~`))
            .map((e) => ({ ...stateOf(e), key: e.key, runId: e.runId, tool: e.tool, toolCallId: e.toolCallId }))
        )
    })
  })
}
