/**
 * A streamed run over a chat's transcript: the agent's system prompt, the conversation the client sent,
 * then its latest text, with every event and delta of the run as a stream (what `runStream` gives for
 * a single input). It is a session's turn (`runSessionTurn`) whose events go to the stream's queue
 * through the `StreamSink` that streaming composites use, so it is the same loop as every other run.
 */
import * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type * as Cause from "effect/Cause"
import type * as Stream from "effect/Stream"
import { type AgentBuilder, type AgentShape, definitionOf, withDefinitionServices } from "../dsl/agent.ts"
import type { RunStreamEvent } from "../dsl/events.ts"
import { StreamSink } from "../dsl/lineage.ts"
import { type AgentError, RuntimeDefect } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { effectQueue, effectStream } from "../internal/lazy-effect.ts"
import type { LlmMessage } from "../model/messages.ts"
import { resumeSessionTurn, runSessionTurn } from "../runtime/run-agent.ts"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import type { Decisions } from "../dsl/decision.ts"
import { ResumeLedger, type ResumeLedgerStore } from "../runtime/resume-ledger.ts"

/** A run that stopped for approval: what `agent.run` gives as `Suspended` (its snapshot and waiting calls). */
export interface ChatSuspension {
  readonly _tag: "Suspended"
  readonly snapshot: unknown
  readonly pending: ReadonlyArray<{ readonly id: string; readonly tool: string; readonly args: unknown; readonly reason?: string }>
}

/** Options of {@link chatStream}. */
export interface ChatStreamOptions {
  /**
   * Called when the run suspends for approval (a tool's `needsApproval`), with its snapshot: keep it to
   * `resume` the run with the user's decisions (`chatHandler`'s `loadSuspended`). It is awaited before
   * the stream ends, which it does with `RunEnd` (outcome `Suspended`) and, in the UI message stream, a
   * `tool-approval-request` per waiting call.
   */
  readonly onSuspended?: (suspension: ChatSuspension) => unknown
  /** A resume ledger for resumed runs: a stored suspension is then resumed once (`SnapshotAlreadyResumed` after). */
  readonly resumeLedger?: ResumeLedgerStore
}

/**
 * The events of a run of `builder` on `input` after the conversation `transcript`.
 *
 * @example
 * ```ts
 * const { transcript, input } = fromUIMessages(await req.json())
 * return eventStreamResponse(chatStream(assistant, transcript, input ?? ""), { format: "ui-message-stream" })
 * ```
 */
export const chatStream = <T extends AgentShape & { readonly requirements: never }>(
  builder: AgentBuilder<T>,
  transcript: ReadonlyArray<LlmMessage>,
  input: T["input"],
  options: ChatStreamOptions = {}
): Stream.Stream<RunStreamEvent, AgentError> => {
  const definition = definitionOf(builder)
  return streamTurn(definition, runSessionTurn(definition, input, transcript), options)
}

/**
 * The events of a suspended run of `builder` resumed from `snapshot` with `decisions` (what
 * `chatHandler` streams when the client answers approvals): `ApprovalDecided`, the calls, the model's
 * next answers, `RunEnd`; it may suspend again (`onSuspended`).
 *
 * @example
 * ```ts
 * const stream = chatResumeStream(teller, stored.snapshot, approvalDecisions(approvals, stored))
 * ```
 */
export const chatResumeStream = <T extends AgentShape & { readonly requirements: never }>(
  builder: AgentBuilder<T>,
  snapshot: unknown,
  decisions: Decisions,
  options: ChatStreamOptions = {}
): Stream.Stream<RunStreamEvent, AgentError> => {
  const definition = definitionOf(builder)
  return streamTurn(definition, resumeSessionTurn(definition, snapshot, decisions, 0), options)
}

const streamTurn = (
  definition: AgentDefinition,
  run: Effect.Effect<{ readonly result: unknown; readonly added: ReadonlyArray<LlmMessage> | undefined }, AgentError, any>,
  options: ChatStreamOptions
): Stream.Stream<RunStreamEvent, AgentError> => {
  const ledger = options.resumeLedger
  const turn = withDefinitionServices(definition, ledger === undefined ? run : Effect.provideService(run, ResumeLedger, ledger)) as Effect.Effect<
    { readonly result: unknown; readonly added: ReadonlyArray<LlmMessage> | undefined },
    AgentError
  >
  const onSuspended = options.onSuspended
  return effectStream().callback<RunStreamEvent, AgentError>((queue: Queue.Queue<RunStreamEvent, AgentError | Cause.Done>) => {
    const offer = (event: RunStreamEvent) => Effect.asVoid(effectQueue().offer(queue, event))
    // The run's own end when it suspends is held back until `onSuspended` has stored the suspension:
    // the client is asked for approvals only once an answer can find them. When storing fails, the
    // stream fails with it (a `RuntimeDefect`) and no approval is asked.
    let heldEnd: RunStreamEvent | undefined
    const sink = (event: RunStreamEvent) =>
      onSuspended !== undefined && event._tag === "RunEnd" && event.parentRunId === undefined && event.outcome._tag === "Suspended"
        ? Effect.sync(() => void (heldEnd = event))
        : offer(event)
    return turn.pipe(
      Effect.provideService(StreamSink, sink),
      Effect.tap(({ result, added }) =>
        added === undefined && onSuspended !== undefined && (result as { readonly _tag?: unknown })?._tag === "Suspended"
          ? Effect.tryPromise({
            try: async () => {
              await onSuspended(result as ChatSuspension)
            },
            catch: (cause) => new RuntimeDefect({ agent: definition.name, cause: new Error(`the suspension could not be stored (onSuspended failed): ${describeCause(cause)}`) })
          })
          : Effect.void
      ),
      Effect.andThen(Effect.suspend(() => (heldEnd === undefined ? Effect.void : offer(heldEnd)))),
      Effect.andThen(effectQueue().end(queue))
    )
  }, { bufferSize: 256, strategy: "suspend" })
}
