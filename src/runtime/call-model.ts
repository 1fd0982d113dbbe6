/**
 * One model call as the loop makes it: hooks around it, a `chat {model}` span (GenAI conventions,
 * `gen-ai-spans.ts`) with the GenAI client metrics (`gen-ai-metrics.ts`), and whatever a custom
 * client does wrong turned into `ModelError` (it throws, returns something that is not an Effect, dies,
 * fails with a value that is not a `ModelError`, interrupts itself, or answers a response that breaks
 * the protocol or whose getters throw), so `run()` and the `RunEnd` event always agree. A streaming
 * run's call reads the client's stream instead (`ModelClient.streamOf`), hands every part to `onPart`
 * as it arrives, and assembles the parts into the same response the loop acts on; a failing `onPart`
 * (a budget) stops the stream, and with it the request.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import { effectStream } from "../internal/lazy-effect.ts"
import { ModelError } from "../errors.ts"
import type { LlmResponse, ModelRequest, Usage } from "../model/messages.ts"
import { isSafeChat, ModelClient, ModelClientService, safeChatExit } from "../model/model-client.ts"
import { PartsAssembler, type ResponsePart } from "../model/response-part.ts"
import { ModelRetryListener } from "../model/model-retry.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { userInterruptAsFailure } from "../internal/from-maybe-effect.ts"
import type { UnscopedEvent } from "./run-context.ts"
import { checkResponseAssigningIds } from "../model/normalize-response.ts"
import type { Steps } from "../internal/steps.ts"
import { withTracing } from "../internal/tracing.ts"
import type { ModelMetadata } from "../model/model-client.ts"
import { CaptureMessageContent, inputContent, outputContent } from "./gen-ai-content.ts"
import { ChunkTimes, recordModelCall, recordModelCallUnsafe } from "./gen-ai-metrics.ts"
import { chatResponseAttributes, chatSpan, errorTypeOf, withErrorType } from "./gen-ai-spans.ts"
import { withGuardedSpan } from "../internal/guarded-span.ts"

/** Wraps the call of a durable run (`Durability.model`, bound to the step). */
export type RecordModelCall = (call: Effect.Effect<LlmResponse, ModelError>) => Effect.Effect<LlmResponse, ModelError>

/**
 * How a call announces its events (`ModelCall`, `Retrying`, `ModelResponse`): `emit` bound to the
 * run's scope, and optionally whether an event of a tag is heard at all (when not, it is not made).
 * A `RunContext` is one.
 */
export interface Announcer {
  emit(event: UnscopedEvent): Effect.Effect<void>
  hears?(tag: UnscopedEvent["_tag"]): boolean
  /** The tokens of a call that failed but cost them (`ModelError.usage`), to count with the run's. */
  spent?(usage: Usage): void
}

/** What a streaming call does with each part of the answer as it arrives. */
export type OnPart<E> = (part: ResponsePart) => Effect.Effect<void, E>

/** Calls the model in `turn`, announcing it through `announcer` (bound to the run's scope); streams when given `onPart`. */
export const callModel = <E = never>(
  announcer: Announcer,
  turn: number,
  request: ModelRequest,
  onPart?: OnPart<E>,
  record?: RecordModelCall
): Effect.Effect<LlmResponse, ModelError | E, ModelClientService> =>
  withTracing((traced, fiber) => {
    const client = Context.getOrUndefined(fiber.context, ModelClientService)
    const call = Effect.gen(() =>
      callModelSteps(announcer, turn, request, onPart, record, {
        traced,
        clock: fiber.getRef(Clock.Clock),
        client
      })
    )
    return traced ? call.pipe(modelSpan(turn, request, client?.metadata, onPart !== undefined)) : call
  })

/**
 * The `chat {model}` span of a call (kind CLIENT), with `error.type` when the call fails and
 * `gen_ai.request.stream` when it reads the client's stream.
 *
 * @example
 * ```ts
 * Effect.gen(() => callModelSteps(emit, turn, request, undefined, undefined, env)).pipe(modelSpan(turn, request, env.client?.metadata))
 * ```
 */
export const modelSpan = (turn: number, request: ModelRequest, model: ModelMetadata | undefined, streaming = false) => {
  const span = chatSpan(turn, request, model, streaming)
  return <A, E, R>(effect: Effect.Effect<A, E, R>) => withGuardedSpan(withErrorType(effect), span.name, span.options)
}

/** What a model call reads from the fiber it runs on: read once per run by the loop, per call by `callModel`. */
export interface CallEnv {
  readonly traced: boolean
  readonly clock: Clock.Clock
  /** The fiber's `ModelClientService`, when provided (else it is asked for). */
  readonly client: ModelClient | undefined
  /** The fiber's services (the metric registry and its attributes): the GenAI metrics are recorded in plain code then. */
  readonly context?: Context.Context<never> | undefined
  /**
   * Whether a `Retrying` event can be heard (a hook, a stream, or a `ModelRetryListener` around the run
   * that ours must shadow); when false, the call goes without a listener of its own (a provider's retry
   * is still logged). Undefined counts as true.
   */
  readonly retryHeard?: boolean | undefined
}

/**
 * `callModel` as generator steps, for the loop to delegate to (`yield*`) inside its own `Effect.gen`
 * when the call needs no span of its own: a model call then costs no Effect of its own.
 *
 * @example
 * ```ts
 * const response = yield* callModelSteps(ctx, ctx.turn, request, undefined, undefined, ctx.callEnv)
 * ```
 */
export function* callModelSteps<E>(
  announcer: Announcer,
  turn: number,
  request: ModelRequest,
  onPart: OnPart<E> | undefined,
  record: RecordModelCall | undefined,
  env: CallEnv
): Steps<LlmResponse, ModelError | E, ModelClientService> {
  if (announcer.hears?.("ModelCall") !== false) yield* announcer.emit({ _tag: "ModelCall", request })
  const client = env.client ?? (yield* ModelClientService)
  const capture = env.traced && (yield* CaptureMessageContent)
  if (capture) yield* Effect.annotateCurrentSpan(inputContent(request.messages))
  // What is not yielded is done in plain functions: this generator's frame lives as long as the call.
  const started = env.clock.currentTimeMillisUnsafe()
  // A streamed call's parts are timed (`gen_ai.client.operation.time_to_first_chunk`, `…time_per_output_chunk`).
  const chunks = onPart === undefined ? undefined : new ChunkTimes(env.clock)
  // A `fromFunction` client's plain call (nothing streamed, recorded or listening for retries) answers its Exit itself.
  const plain = onPart === undefined && record === undefined && env.retryHeard === false ? safeChatExit(client.chat) : undefined
  const exit = plain !== undefined ? yield* plain(request) : yield* Effect.exit(answerOf(announcer, client, turn, request, onPart, record, env, chunks))
  const durationMs = env.clock.currentTimeMillisUnsafe() - started
  const checked = checkedOutcome(exit, client, turn, onPart, record)
  // A failed call is measured too (`gen_ai.client.operation.duration` with its `error.type`). A durable
  // run's call is measured inside what it records (`answerOf`): a replay, which reads the recorded
  // answer back, is no call to the model and is not counted again.
  if (record === undefined) {
    const measure = measureCall(client, durationMs, checked, env, chunks)
    if (measure !== undefined) yield* measure
  }
  if (Exit.isFailure(checked)) {
    // A reply that cannot be used was still paid for (`ModelError.usage`); a durable run's is counted
    // when it is read back too, as its answered calls are.
    const usage = failedUsage(checked)
    if (usage !== undefined) announcer.spent?.(usage)
    return yield* (checked as Exit.Exit<never, ModelError | E>)
  }
  const response = checked.value as LlmResponse
  if (env.traced) yield* Effect.annotateCurrentSpan(responseAttributes(response, capture, chunks))
  if (announcer.hears?.("ModelResponse") !== false) yield* announcer.emit({ _tag: "ModelResponse", response, durationMs })
  return response
}

/**
 * A model call with nothing to yield but the model itself (`plainCall`): its client, when it started,
 * and the call answering its Exit. The loop's turn yields `answer` and hands the Exit to `plainAnswered`,
 * so the call costs no generator of its own (issue #37).
 */
export class PlainCall {
  constructor(
    readonly client: ModelClient,
    readonly started: number,
    readonly answer: Effect.Effect<Exit.Exit<LlmResponse, ModelError>>
  ) {}
}

/**
 * The call `callModelSteps` would make with nothing around it (an untraced, unrecorded, unstreamed call
 * of a `fromFunction` client whose `ModelCall`, `ModelResponse` and `Retrying` nobody hears, its metrics
 * recorded in plain code), started; undefined for any other call.
 *
 * @example
 * ```ts
 * const plain = plainCall(ctx, request, ctx.callEnv)
 * const response = plain === undefined ? yield* callModelSteps(...) : plainAnswered(ctx, plain, yield* plain.answer, ctx.callEnv)
 * ```
 */
export const plainCall = (announcer: Announcer, request: ModelRequest, env: CallEnv): PlainCall | undefined => {
  const client = env.client
  if (client === undefined || env.traced || env.retryHeard !== false || env.context === undefined) return undefined
  if (announcer.hears?.("ModelCall") !== false || announcer.hears?.("ModelResponse") !== false) return undefined
  const chat = safeChatExit(client.chat)
  if (chat === undefined) return undefined
  return new PlainCall(client, env.clock.currentTimeMillisUnsafe(), chat(request))
}

/**
 * A plain call's Exit, as `callModelSteps` ends a call: measured (the GenAI metrics), a failure's usage
 * spent; the response, or the failure to fail the step with.
 */
export const plainAnswered = (announcer: Announcer, call: PlainCall, exit: Exit.Exit<LlmResponse, ModelError>, env: CallEnv): LlmResponse | Exit.Failure<never, ModelError> => {
  measureCall(call.client, env.clock.currentTimeMillisUnsafe() - call.started, exit, env, undefined)
  if (Exit.isSuccess(exit)) return exit.value
  const usage = failedUsage(exit)
  if (usage !== undefined) announcer.spent?.(usage)
  return exit as Exit.Failure<never, ModelError>
}

/** The span's attributes of an answer: the response's, its content when captured, a streamed call's `gen_ai.response.time_to_first_chunk`. */
const responseAttributes = (response: LlmResponse, capture: boolean, chunks: ChunkTimes | undefined): Record<string, unknown> => {
  const attributes: Record<string, unknown> = capture ? { ...chatResponseAttributes(response), ...outputContent(response) } : chatResponseAttributes(response)
  if (chunks?.first !== undefined) attributes["gen_ai.response.time_to_first_chunk"] = chunks.first
  return attributes
}

/**
 * The call as an Effect: the client's stream (handed to `onPart`, its parts timed in `chunks`) or its
 * `chat`, with a `Retrying` event per wait of a retrying provider, recorded in a durable run.
 */
const answerOf = <E>(
  announcer: Announcer,
  client: ModelClient,
  turn: number,
  request: ModelRequest,
  onPart: OnPart<E> | undefined,
  record: RecordModelCall | undefined,
  env: CallEnv,
  chunks: ChunkTimes | undefined
): Effect.Effect<unknown, ModelError | E> => {
  const call: Effect.Effect<unknown, ModelError | E> = onPart === undefined
    ? chatSafely(client, request)
    : streamed(client, request, turn, onPart, chunks).pipe(Effect.catchDefect((defect) => Effect.fail(crashed("crashed", defect))))
  // A retrying provider announces each wait (`announceRetry`); in a run, that is a `Retrying` event
  // (when something can hear it: providing the listener costs a copy of the fiber's services per call).
  const raw = env.retryHeard === false ? call : Effect.provideService(call, ModelRetryListener, (notice) => announcer.emit({ _tag: "Retrying", ...notice }))
  if (record === undefined) return raw
  // A durable run records the checked answer (or its ModelError), and a replay reads it back; the call
  // is measured when it is made, inside what is recorded.
  const unchecked = uncheckedTurn(client, turn, onPart)
  const answered = (unchecked === undefined ? raw : Effect.flatMap(raw, (raw) => checkedResponse(raw, unchecked))) as Effect.Effect<LlmResponse, ModelError>
  return record(Effect.suspend(() => {
    const started = env.clock.currentTimeMillisUnsafe()
    return Effect.onExit(answered, (exit) => measureCall(client, env.clock.currentTimeMillisUnsafe() - started, exit, env, chunks) ?? Effect.void)
  }))
}

/**
 * Records the GenAI metrics of a call that ended with `exit` (its duration, its usage or `error.type`,
 * a streamed call's chunk times), in plain code when the run read its services once (`env.context`);
 * an Effect to run otherwise, or undefined when there is nothing to record (an interruption).
 */
const measureCall = (
  client: ModelClient,
  durationMs: number,
  exit: Exit.Exit<unknown, unknown>,
  env: CallEnv,
  chunks: ChunkTimes | undefined
): Effect.Effect<void> | undefined => {
  const errorType = Exit.isFailure(exit) ? errorTypeOf(exit.cause) : undefined
  if (Exit.isFailure(exit) && errorType === undefined) return undefined
  const usage = Exit.isSuccess(exit) ? (exit.value as LlmResponse).usage : failedUsage(exit)
  if (env.context === undefined) return recordModelCall(client.metadata, durationMs, usage, errorType, chunks)
  recordModelCallUnsafe(client.metadata, durationMs, usage, errorType, env.context, chunks)
  return undefined
}

/** The turn to check an answer for, or undefined when it needs no check: a `fromFunction` client's chat is checked already (`isSafeChat`). */
const uncheckedTurn = (client: ModelClient, turn: number, onPart: OnPart<any> | undefined): number | undefined =>
  onPart === undefined && isSafeChat(client.chat) ? undefined : turn

/** The call's outcome checked (unless checked already: a `fromFunction` answer, a recorded one). */
const checkedOutcome = (
  exit: Exit.Exit<unknown, unknown>,
  client: ModelClient,
  turn: number,
  onPart: OnPart<any> | undefined,
  record: RecordModelCall | undefined
): Exit.Exit<unknown, unknown> => {
  if (Exit.isFailure(exit) || record !== undefined) return exit
  const unchecked = uncheckedTurn(client, turn, onPart)
  return unchecked === undefined ? exit : checkedExit(exit.value, unchecked)
}

/** `checkedResponse` as an Exit. */
const checkedExit = (raw: unknown, turn: number): Exit.Exit<LlmResponse, ModelError> => {
  const checked = checkResponseAssigningIds(raw, turn)
  return Result.isSuccess(checked) ? Exit.succeed(checked.success) : Exit.fail(invalidResponse(checked.failure))
}

const invalidResponse = (failure: string) =>
  new ModelError({ provider: "model client", reason: `the response is not a valid LlmResponse: ${failure}`, retryable: false })

/** The client's answer as a checked `LlmResponse` (missing call ids assigned), or the `ModelError` saying why not. */
const checkedResponse = (raw: unknown, turn: number): Effect.Effect<LlmResponse, ModelError> => {
  const checked = checkResponseAssigningIds(raw, turn)
  return Result.isSuccess(checked) ? Effect.succeed(checked.success) : Effect.fail(invalidResponse(checked.failure))
}

const crashed = (what: string, cause: unknown) =>
  new ModelError({ provider: "model client", reason: `the client ${what}: ${describeCause(cause)}`, cause, retryable: false })

/** `client.chat(request)`, every misbehaviour of a custom client a `ModelError`; an interruption from outside stays one. */
const chatSafely = (client: ModelClient, request: ModelRequest): Effect.Effect<unknown, ModelError> => {
  if (isSafeChat(client.chat)) return client.chat(request)
  let out: unknown
  try {
    out = client.chat(request)
  } catch (error) {
    return Effect.fail(crashed("threw", error))
  }
  if (!Effect.isEffect(out)) return Effect.fail(crashed("returned something that is not an Effect", out))
  return userInterruptAsFailure(out as Effect.Effect<unknown, unknown>).pipe(
    Effect.catchCause((cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const error = Cause.squash(cause)
      return Effect.fail(error instanceof ModelError ? error : crashed(Cause.hasFails(cause) ? "failed with a value that is not a ModelError" : "crashed", error))
    })
  )
}

/** What a failed call cost, when its `ModelError` says (`usage`). */
const failedUsage = (exit: Exit.Exit<unknown, unknown>): Usage | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const failure = exit.cause.reasons.find(Cause.isFailReason)
  return failure !== undefined && failure.error instanceof ModelError ? failure.error.usage : undefined
}

/** Whether a part is output (text, reasoning, a tool call's start or arguments), not a report about it. */
const carriesOutput = (part: ResponsePart): boolean => {
  switch (part._tag) {
    case "TextDelta":
    case "ReasoningDelta":
    case "Reasoning":
    case "ToolCallStart":
    case "ToolCallDelta":
      return true
    default:
      return false
  }
}

/** The client's stream, each part timed (`chunks`) and handed to `onPart`, folded into the response. */
const streamed = <E>(
  client: ModelClient,
  request: ModelRequest,
  turn: number,
  onPart: OnPart<E>,
  chunks: ChunkTimes | undefined
): Effect.Effect<LlmResponse, ModelError | E> =>
  Effect.suspend(() => {
    const assembler = new PartsAssembler(turn)
    return ModelClient.streamOf(client, request).pipe(
      effectStream().runForEach((part) => {
        chunks?.arrived(carriesOutput(part))
        assembler.add(part)
        return onPart(part)
      }),
      // A stream that fails after it reported usage: the error carries what was spent.
      Effect.mapError((error) => {
        const usage = assembler.usage
        return error instanceof ModelError && error.usage === undefined && usage !== undefined ? error.withUsage(usage) as typeof error : error
      }),
      Effect.flatMap(() => {
        const response = assembler.response()
        return Result.isSuccess(response)
          ? Effect.succeed(response.success)
          : Effect.fail(new ModelError({ provider: "model client", reason: `the streamed parts do not make a response: ${response.failure}`, retryable: false }))
      })
    )
  })
