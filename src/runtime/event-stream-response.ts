/**
 * Serving a streaming run: a standard `Response` whose body is Server-Sent Events, usable from any
 * fetch-style server (Deno, Bun, Hono, Next.js route handlers) and from Node's `http` with
 * `sendResponse` (src/node). Two formats:
 * - `"events"` (default): one SSE event per run event, `event: <_tag>` and `data: <JSON>`; a failed run
 *   ends with `event: error` carrying the `AgentError`'s tag and message.
 * - `"ui-message-stream"`: the AI SDK's UI message stream protocol (what `useChat` reads): `start`,
 *   `start-step`, `text-*`, `reasoning-*`, `tool-input-*`, `tool-output-*`, a transient `data-retrying`
 *   part per wait before a model call is retried, a transient `data-tool-progress` part per report of a
 *   running tool, `finish-step`, `error`, `finish` (its `finishReason`: `stop`, `tool-calls`, `length`,
 *   `error` or `other`), then `data: [DONE]`. A child run streams into the same message; the parts of an
 *   agent called as a tool are marked as the child's (`{ "effect-agent-dsl": { childRun, agent } }`). A
 *   run that suspends for approval sends a `tool-approval-request` per waiting call (its `approvalId` is
 *   `<run id>:<decision key>`, see `approvalId`) before `finish`, so `useChat` shows the approval; a
 *   resumed run (no `RunStart`) continues the last assistant message, and a denied call gets
 *   `tool-output-denied`.
 * - `"ag-ui"`: AG-UI 1.0 events (`RUN_STARTED` … `RUN_FINISHED`/`RUN_ERROR`), one `data:` frame each, as
 *   `@ag-ui/client`'s `HttpAgent` reads them; the mapping is `toAgUiEvents` (src/protocols/ag-ui/wire),
 *   its ids and client tools come from `agUi`.
 * A composite's stream (`pipeline(...).runStream(input)`) is served alike: its members' runs stream into
 * one message (`"ui-message-stream"`: `start` named by the top-level composite's run id, its end as
 * `finish`, a failure as `error` first; a composite that waits for decisions ends with `finish` of
 * reason `tool-calls`, and is continued with `composite.resume`: its waiting calls are not offered as
 * approval requests), its `CompositeStart` and `CompositeEnd` are events of their own (`"events"`,
 * whatever `include` says), and AG-UI ends it with `RUN_FINISHED` (`toAgUiEvents`).
 * Closing the response (the client went away) interrupts the run and its model request, and so does
 * `signal` (the request's) when it aborts: some runtimes abort the request's signal but never cancel
 * the body of a response whose client went away.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import { effectStream } from "../internal/lazy-effect.ts"
import type { RunStreamEvent } from "../dsl/events.ts"
import { type CompositeStreamEvent, isCompositeEvent, runOutcomeOfComposite } from "../dsl/composite-events.ts"
import { type AgentError, InvalidToolArgs, ToolNotAllowed } from "../errors.ts"
import { agUiFrames, type AgUiStreamOptions } from "../protocols/ag-ui/wire/to-ag-ui.ts"
import { routeOf } from "../dsl/child-listing.ts"
import { type ChildRunMark, childRunKey } from "./child-run-mark.ts"
import { toolResultContent } from "./prompt.ts"

/** Options of {@link eventStreamResponse}. */
export interface EventStreamOptions {
  /** The wire format. Default `"events"`. */
  readonly format?: "events" | "ui-message-stream" | "ag-ui"
  /** Format `"ag-ui"`: the thread and run ids the events carry, and the client's own tools. */
  readonly agUi?: AgUiStreamOptions
  /**
   * Which run events to send (format `"events"`). Default: all but `ModelCall`, whose request holds the
   * system prompt and the whole transcript.
   */
  readonly include?: (event: RunStreamEvent) => boolean
  /** Extra response headers. */
  readonly headers?: Record<string, string>
  /**
   * The text a client is shown for an error (`"ui-message-stream"`: the run's failure in the `error`
   * chunk, and a tool's failure in its `tool-output-error`), as the AI SDK's `onError`. Default: the
   * error's message. Mask what a user must not see: `onError: () => "An error occurred."`
   */
  readonly onError?: (error: unknown) => string
  /**
   * Stops the run (and ends the body) when it aborts: pass the request's `signal`, which runtimes abort
   * when the client goes away even where they never cancel the response body. An aborted signal runs nothing.
   */
  readonly signal?: AbortSignal
}

const defaultInclude = (event: RunStreamEvent) => event._tag !== "ModelCall"

/** Errors as JSON: their tag, message and fields (no causes). */
const replacer = (key: string, value: unknown): unknown => {
  if (key === "cause") return undefined
  if (value instanceof Error) return { ...value, _tag: (value as { _tag?: unknown })._tag ?? value.name, message: value.message }
  if (typeof value === "bigint") return value.toString()
  return value
}

const frame = (data: unknown, event?: string): string =>
  `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data, replacer)}\n\n`

/**
 * One Server-Sent Events frame: `id:` when given (what a client sends back as `Last-Event-ID` when it
 * reconnects), `event:` when given, and `data:` as JSON (errors as their tag, message and fields).
 *
 * @example
 * ```ts
 * sseFrame({ _tag: "Turn", turn: 1 }, "Turn", 7) // "id: 7\nevent: Turn\ndata: {…}\n\n"
 * ```
 */
export const sseFrame = (data: unknown, event?: string, id?: string | number): string => `${id === undefined ? "" : `id: ${id}\n`}${frame(data, event)}`

const errorText = (cause: Cause.Cause<AgentError>): { readonly _tag: string; readonly message: string } => {
  const error = Cause.squash(cause)
  return error instanceof Error
    ? { _tag: (error as { _tag?: string })._tag ?? error.name, message: error.message }
    : { _tag: "Unknown", message: String(error) }
}

/**
 * A run's events as a `text/event-stream` `Response`.
 *
 * @example
 * ```ts
 * // any fetch-style server
 * export const POST = async (req: Request) => eventStreamResponse(calculator.runStream(await req.text()))
 * // useChat on the client
 * eventStreamResponse(calculator.runStream(question), { format: "ui-message-stream" })
 * // a composite: every member's run in one message
 * eventStreamResponse(pipeline("research", planner, writer).runStream(topic), { format: "ui-message-stream" })
 * // AG-UI front ends (CopilotKit, @ag-ui/client)
 * eventStreamResponse(calculator.runStream(question), { format: "ag-ui", agUi: { threadId } })
 * ```
 */
export const eventStreamResponse = (stream: Stream.Stream<CompositeStreamEvent, AgentError>, options: EventStreamOptions = {}): Response => {
  const signal = options.signal
  const events = signal === undefined ? stream : signal.aborted ? effectStream().empty : stream.pipe(effectStream().interruptWhen(aborted(signal)))
  const ui = options.format === "ui-message-stream"
  const frames = ui
    ? uiMessageFrames(events, options.onError ?? messageOf)
    : options.format === "ag-ui"
    ? agUiFrames(events, options.agUi)
    : eventFrames(events, options.include ?? defaultInclude)
  const body = effectStream().toReadableStream(frames.pipe(effectStream().encodeText))
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      ...(ui ? { "x-vercel-ai-ui-message-stream": "v1" } : {}),
      ...options.headers
    }
  })
}

/** Succeeds once `signal` aborts. */
const aborted = (signal: AbortSignal): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/**
 * An event's frame, never failing on a field JSON cannot hold (a tool's cyclic result, a throwing
 * `toJSON`): that field is what the model was given for it (`jsonOr`), as the UI message stream sends it.
 */
const eventFrame = (event: CompositeStreamEvent): string => {
  try {
    return frame(event, event._tag)
  } catch {
    return frame(Object.fromEntries(Object.entries(event).map(([key, value]) => [key, jsonOr(value)])), event._tag)
  }
}

const eventFrames = (events: Stream.Stream<CompositeStreamEvent, AgentError>, include: (event: RunStreamEvent) => boolean) =>
  events.pipe(
    effectStream().filter((event) => isCompositeEvent(event) || include(event)),
    effectStream().map(eventFrame),
    effectStream().catchCause((cause) => (Cause.hasInterruptsOnly(cause) ? effectStream().failCause(cause) : effectStream().make(frame(errorText(cause), "error"))))
  )

/** An error's message (its text when it is no `Error`), never throwing: what a client is shown by default. */
const messageOf = (error: unknown): string => {
  try {
    return error instanceof Error ? error.message : String(error)
  } catch {
    return "the error cannot be shown as text"
  }
}

/** `shown(error)`, or the default text when that throws (a user's `onError` must not end the stream). */
const shownSafely = (shown: (error: unknown) => string, error: unknown): string => {
  try {
    const text = shown(error)
    return typeof text === "string" ? text : messageOf(text)
  } catch {
    return messageOf(error)
  }
}

const callKey = (runId: string, callId: string) => `${runId} ${callId}`

/** The AI SDK UI message stream chunks for a run (see the module comment); `shown` is the text of an error. */
const uiMessageFrames = (events: Stream.Stream<CompositeStreamEvent, AgentError>, shown: (error: unknown) => string): Stream.Stream<string, AgentError> =>
  effectStream().suspend(() => {
    let stepOpen = false
    /**
     * The open text and reasoning blocks, by run: runs that stream at once (a `parallel`'s members)
     * each write into parts of their own. Every block is closed before a step ends (the AI SDK's reader
     * forgets open blocks at `finish-step`): a run still writing then opens a new part.
     */
    const texts = new Map<string, string>()
    const reasonings = new Map<string, string>()
    /** The agent runs started and not ended in this stream: a step ends when none of them is left writing. */
    const running = new Set<string>()
    /**
     * UI ids of the calls each run started in its current turn, by index; UI ids by run and the loop's
     * call id. A call id is only unique within its run (a model names its calls per response, and a
     * child run's first call is often the parent's `call_1_0`), while a UI id names one part of the
     * message: a run under another (a child, a handoff's target, a composite's member) gets its calls'
     * UI ids as `<run id>-<call id>`, stable across a suspension, and an id taken already in this
     * stream gets `-2`, `-3`, … after it.
     */
    const started = new Map<string, Map<number, string>>()
    const uiIds = new Map<string, string>()
    const usedUiIds = new Set<string>()
    const shownId = (runId: string, parentRunId: string | undefined, callId: string) => (parentRunId === undefined ? callId : `${runId}-${callId}`)
    const freshUiId = (base: string) => {
      let id = base
      for (let n = 2; usedUiIds.has(id); n++) id = `${base}-${n}`
      usedUiIds.add(id)
      return id
    }
    /** The UI id of the loop's call `callId` of `runId`: as the stream named it, or as it would. */
    const uiIdOf = (event: { readonly runId: string; readonly parentRunId?: string | undefined }, callId: string) =>
      uiIds.get(callKey(event.runId, callId)) ?? shownId(event.runId, event.parentRunId, callId)
    const runOf = new Map<string, string | undefined>()
    /**
     * The runs of agents called as tools (and their own children): their parts stream into the message
     * marked as theirs (`childRunMark`), so that `fromUIMessages` leaves them out of the next turn's
     * transcript (they are the child's, not the parent's: its text, its calls to tools the parent has
     * not). A child run is one started while its parent has a call without an outcome; a handoff's
     * target starts after the handoff's outcome, and a composite's members under a composite: theirs
     * are the conversation's.
     */
    const inner = new Map<string, ChildRunMark>()
    const openCalls = new Map<string, Set<string>>()
    const settle = (runId: string, toolCallId: string) => void openCalls.get(runId)?.delete(toolCallId)
    /**
     * Every call of `runId` still without an outcome gets one, `errorText` saying why (the calls after a
     * handoff or a submit, a refused submit, the calls of a run that ended): a UI never shows a call as
     * running for ever, and the next turn's transcript has a result for each.
     */
    const closeOpen = (runId: string, errorText: string, out: Array<unknown>) => {
      for (const id of openCalls.get(runId) ?? []) out.push({ type: "tool-output-error", toolCallId: uiIdOf({ runId, parentRunId: runOf.get(runId) }, id), errorText })
      openCalls.delete(runId)
    }
    /** Ends `runId`'s open blocks, or every run's. */
    const closeBlocks = (out: Array<unknown>, runId?: string) => {
      for (const [run, id] of texts) if (runId === undefined || run === runId) out.push({ type: "text-end", id }), texts.delete(run)
      for (const [run, id] of reasonings) if (runId === undefined || run === runId) out.push({ type: "reasoning-end", id }), reasonings.delete(run)
    }
    const finishStep = (out: Array<unknown>) => {
      closeBlocks(out)
      if (stepOpen) out.push({ type: "finish-step" })
      stepOpen = false
    }
    /**
     * The calls `runId` began to stream (`tool-input-start`) whose answer never came whole (the model's
     * stream ended or failed inside them): each gets an outcome, so that no call shows as streaming for ever.
     */
    const closeTorn = (runId: string | undefined, out: Array<unknown>) => {
      for (const [run, byIndex] of started) {
        if (runId !== undefined && run !== runId) continue
        for (const id of byIndex.values()) if (!announced.has(id)) out.push({ type: "tool-output-error", toolCallId: id, errorText: "not run: the model's answer ended before this call was complete" })
        started.delete(run)
      }
    }
    /** The id of the run's open text or reasoning part, opened (`<kind>-start`) when it has none. */
    const partOf = (
      open: Map<string, string>,
      kind: "text" | "reasoning",
      event: { readonly runId: string; readonly turn: number },
      mark: ChildRunMark | undefined,
      out: Array<unknown>
    ): string => {
      let id = open.get(event.runId)
      if (id === undefined) {
        open.set(event.runId, (id = freshUiId(`${event.runId}-${kind}-${event.turn}`)))
        out.push(withMark({ type: `${kind}-start`, id }, "providerMetadata", mark))
      }
      return id
    }
    /** UI ids of the calls whose whole input was sent (`tool-input-available`). */
    const announced = new Set<string>()
    let startSent = false
    /** The top-level run's end was sent (with its failure, if it failed). */
    let finished = false
    /** The end of the stream's top-level run (an agent's `RunEnd`, a composite's `CompositeEnd`): its failure, then `finish`. */
    const finish = (outcome: Extract<RunStreamEvent, { _tag: "RunEnd" }>["outcome"], out: Array<unknown>) => {
      if (outcome._tag === "Failure") out.push({ type: "error", errorText: shownSafely(shown, outcome.error) })
      out.push({ type: "finish", finishReason: finishReasonOf(outcome) })
      finished = true
    }
    const toChunks = (event: CompositeStreamEvent): Array<unknown> => {
      const out: Array<unknown> = []
      // One message per response: the top-level run's start names it (an agent's or a composite's); a
      // resumed run (no RunStart) continues the client's last assistant message. A child run (a handoff
      // target, an agent called as a tool, a composite's member) continues it too: a `start` with its id
      // would make the AI SDK begin another message.
      const opens = (event._tag === "RunStart" || event._tag === "CompositeStart") && event.parentRunId === undefined
      if (!startSent) out.push(opens ? { type: "start", messageId: event.runId } : { type: "start" })
      startSent = true
      const mark = inner.get(event.runId)
      if (!runOf.has(event.runId)) runOf.set(event.runId, event.parentRunId)
      switch (event._tag) {
        case "RunStart":
          running.add(event.runId)
          if (event.parentRunId !== undefined && (inner.has(event.parentRunId) || (openCalls.get(event.parentRunId)?.size ?? 0) > 0)) {
            inner.set(event.runId, { [childRunKey]: { childRun: event.runId, agent: event.agent } })
          }
          break
        case "Turn":
          // A new turn: the calls of the last one are done (some end without an event of their own: those
          // after a submit, a refused submit).
          closeOpen(event.runId, "not run", out)
          closeTorn(event.runId, out)
          finishStep(out)
          out.push({ type: "start-step" })
          stepOpen = true
          break
        case "TextDelta":
          out.push({ type: "text-delta", id: partOf(texts, "text", event, mark, out), delta: event.delta })
          break
        case "ReasoningDelta":
          out.push({ type: "reasoning-delta", id: partOf(reasonings, "reasoning", event, mark, out), delta: event.delta })
          break
        case "ToolCallStart": {
          const id = freshUiId(event.toolCallId === undefined ? `${event.runId}-call-${event.turn}-${event.index}` : shownId(event.runId, event.parentRunId, event.toolCallId))
          let byIndex = started.get(event.runId)
          if (byIndex === undefined) started.set(event.runId, (byIndex = new Map()))
          byIndex.set(event.index, id)
          out.push(withMark({ type: "tool-input-start", toolCallId: id, toolName: event.tool }, "toolMetadata", mark))
          break
        }
        case "ToolCallDelta": {
          const id = started.get(event.runId)?.get(event.index)
          if (id !== undefined) out.push({ type: "tool-input-delta", toolCallId: id, inputTextDelta: event.delta })
          break
        }
        case "ModelResponse": {
          closeBlocks(out, event.runId)
          if (event.response._tag !== "ToolCalls") {
            closeTorn(event.runId, out)
            break
          }
          const ids = [...(started.get(event.runId) ?? [])].sort(([a], [b]) => a - b).map(([, id]) => id)
          const open = openCalls.get(event.runId) ?? new Set<string>()
          openCalls.set(event.runId, open)
          event.response.calls.forEach((call, i) => {
            const id = ids[i] ?? freshUiId(shownId(event.runId, event.parentRunId, call.id))
            uiIds.set(callKey(event.runId, call.id), id)
            open.add(call.id)
            if (ids[i] === undefined) out.push(withMark({ type: "tool-input-start", toolCallId: id, toolName: call.name }, "toolMetadata", mark))
            out.push(withMark({ type: "tool-input-available", toolCallId: id, toolName: call.name, input: parseOr(call.arguments) }, "toolMetadata", mark))
            announced.add(id)
          })
          closeTorn(event.runId, out)
          break
        }
        case "Retrying":
          // A transient data part: a client may show "retrying…"; it is not kept in the message.
          out.push({ type: "data-retrying", data: retryingData(event), transient: true })
          break
        case "ToolProgress":
          // A transient data part beside the call: a client may show it while the tool runs.
          out.push({ type: "data-tool-progress", data: { toolCallId: uiIdOf(event, event.toolCallId), tool: event.tool, progress: jsonOr(event.data) }, transient: true })
          break
        case "ToolUse":
          settle(event.runId, event.toolCallId)
          out.push({ type: "tool-output-available", toolCallId: uiIdOf(event, event.toolCallId), output: jsonOr(event.result ?? null) })
          break
        case "ToolError":
          settle(event.runId, event.toolCallId)
          out.push({ type: "tool-output-error", toolCallId: uiIdOf(event, event.toolCallId), errorText: shownSafely(shown, event.error) })
          break
        case "InvalidArgs": {
          settle(event.runId, event.toolCallId)
          // The issues by default (what the model was told); `onError` masks them, as it masks every error's text.
          const error = new InvalidToolArgs({ agent: event.agent, skill: event.skill, tool: event.tool, raw: event.raw, issues: event.issues })
          out.push({ type: "tool-output-error", toolCallId: uiIdOf(event, event.toolCallId), errorText: shown === messageOf ? event.issues : shownSafely(shown, error) })
          break
        }
        case "ToolHallucinated":
          settle(event.runId, event.toolCallId)
          // The call was sent as tool-input-available: it gets its outcome, what the model was told (masked by `onError`).
          out.push({
            type: "tool-output-error",
            toolCallId: uiIdOf(event, event.toolCallId),
            errorText: shownSafely(shown, new ToolNotAllowed({ agent: event.agent, skill: event.skill, tool: event.tool, allowed: event.allowed }))
          })
          break
        case "Handoff":
          // Nothing after a handoff runs: the target that starts next is the conversation's, not a child of an open call.
          settle(event.runId, event.toolCallId)
          out.push({ type: "tool-output-available", toolCallId: uiIdOf(event, event.toolCallId), output: `Handed off to agent "${event.to}".` })
          closeOpen(event.runId, `not run: handed off to agent "${event.to}"`, out)
          break
        case "ApprovalDecided":
          if (event.decision === "deny") settle(event.runId, event.toolCallId)
          if (event.decision === "deny") out.push({ type: "tool-output-denied", toolCallId: uiIdOf(event, event.toolCallId) })
          break
        case "RunEnd":
          running.delete(event.runId)
          closeBlocks(out, event.runId)
          closeTorn(event.runId, out)
          // A run waiting for decisions keeps its calls open (the approval requests below name them). One that
          // answered through its typed-answer tool (`submit`): that call is the first still open (every call
          // before it has its outcome), and its output is the answer; the calls after it did not run.
          if (event.outcome._tag === "Success") {
            const submitted = openCalls.get(event.runId)?.values().next().value
            if (submitted !== undefined) {
              settle(event.runId, submitted)
              out.push({ type: "tool-output-available", toolCallId: uiIdOf(event, submitted), output: jsonOr(event.outcome.output ?? null) })
            }
            closeOpen(event.runId, "not run: the run ended with its answer", out)
          } else if (event.outcome._tag !== "Suspended") {
            // A call may have been running when the run ended (its deadline, an interruption): "not run"
            // would tell the next turn's model that a call with effects never happened.
            closeOpen(event.runId, "no result: the run ended before this call finished (it may have started)", out)
          }
          // The calls the run waits on, named by the top-level run (a child's are among them, by path).
          if (event.parentRunId === undefined && event.outcome._tag === "Suspended") {
            for (const pending of event.outcome.pending) {
              // A child's or a handoff target's call: the part its own run's stream showed.
              const route = routeOf(event.outcome.snapshot, pending.id)
              const toolCallId = route === undefined ? uiIdOf(event, pending.id) : uiIds.get(callKey(route.runId, route.callId)) ?? `${route.runId}-${route.callId}`
              out.push({ type: "tool-approval-request", approvalId: approvalId(event.runId, pending.id), toolCallId })
            }
          }
          // A child run's end (a handoff target, an agent under a composite) ends the step, not the message,
          // unless other runs are still writing into it (a parallel's other members).
          if (event.parentRunId === undefined || running.size === 0) finishStep(out)
          if (event.parentRunId !== undefined) break
          finish(event.outcome, out)
          break
        case "CompositeEnd":
          // The top-level composite's end ends the message; a composite under it ends nothing of it.
          if (event.parentRunId !== undefined) break
          closeTorn(undefined, out)
          finishStep(out)
          finish(runOutcomeOfComposite(event.outcome), out)
          break
      }
      return out
    }
    /**
     * The message's end when the top-level run's own did not come: `start` if none was sent, every open
     * call's outcome (`no result: the run <how> before this call finished`), the step's end, then `last`
     * (the `finish`, after the failure's `error`). Said once.
     */
    const endUnfinished = (how: string, last: ReadonlyArray<unknown>) => {
      if (finished) return effectStream().empty
      const chunks: Array<unknown> = []
      if (!startSent) chunks.push({ type: "start" })
      closeTorn(undefined, chunks)
      for (const runId of [...openCalls.keys()]) closeOpen(runId, `no result: the run ${how} before this call finished (it may have started)`, chunks)
      finishStep(chunks)
      chunks.push(...last)
      finished = true
      return effectStream().fromIterable(chunks.map((chunk) => frame(chunk)))
    }
    return events.pipe(
      effectStream().flatMap((event) => effectStream().fromIterable(toChunks(event).map((chunk) => frame(chunk)))),
      // A run's failure is reported in `RunEnd`'s chunks; one before the run ended (a snapshot that does
      // not decode, no model, a store that fails) gets its own `error` and `finish` here. The protocol
      // ends with [DONE] either way.
      effectStream().catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? effectStream().failCause(cause)
          : endUnfinished("ended", [{ type: "error", errorText: shownSafely(shown, Cause.squash(cause)) }, { type: "finish", finishReason: "error" }])
      ),
      // Events that end before the top-level run did (the response's `signal` stopped the run): its open
      // calls get their outcome and the message its `finish` (`other`, an interrupted run), so a reader
      // still reading never keeps a call waiting for ever.
      effectStream().concat(effectStream().suspend(() => endUnfinished("was stopped", [{ type: "finish", finishReason: "other" }]))),
      effectStream().concat(effectStream().make("data: [DONE]\n\n"))
    )
  })

/**
 * The `approvalId` of a waiting call in the UI message stream: the run's id and the call's decision
 * key (its id, or `<call id>/<child call id>` for a child run's call), so an answer names exactly the
 * call and the run it decides (`approvalDecisions` in `effect-agent-dsl/web` checks both).
 *
 * @example
 * ```ts
 * approvalId("run_1", "call_2") // "run_1:call_2"
 * ```
 */
export const approvalId = (runId: string, decisionKey: string): string => `${runId}:${decisionKey}`

const retryingData = (event: Extract<RunStreamEvent, { _tag: "Retrying" }>) => ({
  attempt: event.attempt,
  maxAttempts: event.maxAttempts,
  waitMs: event.waitMs,
  reason: event.reason,
  provider: event.provider,
  ...(event.model === undefined ? {} : { model: event.model })
})

/** `chunk` with `mark` under `field`, when the chunk is a child run's. */
const withMark = (chunk: Record<string, unknown>, field: "providerMetadata" | "toolMetadata", mark: ChildRunMark | undefined) =>
  mark === undefined ? chunk : { ...chunk, [field]: mark }

/**
 * The `finishReason` of the AI SDK's `finish` chunk (what `useChat`'s `onFinish` is told): `stop`, `tool-calls`
 * for a run waiting for approvals, `length` for a run out of tokens, `error` for another failure,
 * `other` for an interrupted one.
 */
const finishReasonOf = (outcome: Extract<RunStreamEvent, { _tag: "RunEnd" }>["outcome"]): "stop" | "tool-calls" | "length" | "error" | "other" => {
  switch (outcome._tag) {
    case "Success":
      return "stop"
    case "Suspended":
      return "tool-calls"
    case "Interrupted":
      return "other"
    case "Failure":
      return outcome.error._tag === "BudgetExceeded" && outcome.error.reason === "tokens" ? "length" : "error"
  }
}

/**
 * A tool's value for a chunk: as it is when JSON holds it, else (a cycle, a throwing `toJSON`) the text
 * the model was given for it, so one such value does not end the stream.
 */
const jsonOr = (value: unknown): unknown => {
  try {
    JSON.stringify(value, replacer)
    return value
  } catch {
    return toolResultContent(value)
  }
}

const parseOr = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
