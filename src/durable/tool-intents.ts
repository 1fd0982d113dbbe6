/**
 * Intents of `mutating` tool calls: before a durable run executes a mutating tool it claims the
 * call's intent, and the claim is committed before the tool runs; when the tool ends, its outcome is
 * written beside the claim. A worker that dies in between leaves a claim without an outcome: when the
 * run replays that call, the claim is already there, the outcome is unknown, and the call goes to
 * reconciliation instead of running again. An outcome written but not yet recorded by the workflow
 * engine (the worker died just after the tool) is read back instead: no reconciliation needed.
 *
 * `ToolIntents.memory` keeps them in this process (tests, the in-memory engine); `ToolIntents.layerSql`
 * (`tool-intents-sql.ts`) in a table of the engine's database.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"

/** What is known of a claimed intent: nothing yet (`Claimed`), or the outcome the tool ended with. */
export type IntentState =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Finished"; readonly outcome: Schema.Json }

/** One call of a mutating tool, as claimed. */
export interface Intent {
  /** Unique per execution: run id, turn, call id and execution number. */
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
  readonly operation: "claim" | "finish" | "read"
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
   * Claims `intent`, committed when this succeeds: `None` when it is new (the caller runs the
   * tool), else what the store knows of the earlier claim.
   */
  readonly claim: (intent: Intent) => Effect.Effect<Option.Option<IntentState>, ToolIntentsFailed>
  /** Writes the outcome the tool of a claimed intent ended with. */
  readonly finish: (key: string, outcome: Schema.Json) => Effect.Effect<void, ToolIntentsFailed>
  /** What the store knows of intent `key` (`None`: never claimed). */
  readonly read: (key: string) => Effect.Effect<Option.Option<IntentState & Intent>, ToolIntentsFailed>
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
    const intents = new Map<string, Intent & IntentState>()
    return ToolIntents.of({
      claim: (intent) =>
        Effect.sync(() => {
          const found = intents.get(intent.key)
          if (found !== undefined) return Option.some(stateOf(found))
          intents.set(intent.key, { ...intent, _tag: "Claimed" })
          return Option.none()
        }),
      finish: (key, outcome) =>
        Effect.sync(() => {
          const found = intents.get(key)
          if (found !== undefined) intents.set(key, { ...found, _tag: "Finished", outcome })
        }),
      read: (key) => Effect.sync(() => Option.fromNullishOr(intents.get(key)))
    })
  })
}

const stateOf = (intent: IntentState): IntentState =>
  intent._tag === "Claimed" ? { _tag: "Claimed" } : { _tag: "Finished", outcome: intent.outcome }
