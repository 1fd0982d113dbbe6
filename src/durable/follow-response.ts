/**
 * A durable run followed over Server-Sent Events: `d.follow` as a `text/event-stream` `Response`, one
 * frame per journalled event with its id (`id: <n>`, `event: <_tag>`, `data: <JSON>`). A browser's
 * `EventSource` (or any SSE client) that reconnects sends the last id it saw as `Last-Event-ID`, and
 * the response starts after it: every event once, across disconnects and runner crashes. The stream
 * ends after the run's end; a journal that cannot be read (the database, or a row of the run that is
 * not an event: `DurableRunUnreadable`) ends it with `event: error`, its data the error's tag and message.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import { effectStream } from "../internal/lazy-effect.ts"
import { sseFrame } from "../runtime/event-stream-response.ts"
import type { RunStreamEvent } from "../dsl/events.ts"
import type { DurableEvent, FollowOptions } from "./follow.ts"
import type { RunJournalFailed } from "./run-journal.ts"
import type { DurableRunUnreadable } from "./run-unreadable.ts"
import type { InputInvalid } from "../errors.ts"

/** Options of {@link followResponse}. */
export interface FollowResponseOptions {
  /** The request: its `Last-Event-ID` header says where to start (after that id). */
  readonly request?: Request
  /** The last event id the client saw, when not taken from `request` (`null`/absent: from the first event). */
  readonly lastEventId?: string | null
  /** Which events to send (default: all journalled). Filtered events still move the id on. */
  readonly include?: (event: RunStreamEvent) => boolean
  /** How often the journal is read while nothing new is there (see `FollowOptions`). */
  readonly pollInterval?: FollowOptions["pollInterval"]
  /** Extra response headers. */
  readonly headers?: Record<string, string>
}

/**
 * Run `runId`'s events as a `text/event-stream` `Response` that resumes from `Last-Event-ID`. A
 * `Last-Event-ID` that is not a non-negative integer answers 400.
 *
 * @example
 * ```ts
 * // GET /runs/:id/events (any fetch-style server), in a process providing the engine
 * const response = yield* followResponse(d, runId, { request })
 * ```
 */
export const followResponse = <R>(
  d: { readonly follow: (runId: string, options?: FollowOptions) => Stream.Stream<DurableEvent, RunJournalFailed | DurableRunUnreadable | InputInvalid, R> },
  runId: string,
  options: FollowResponseOptions = {}
): Effect.Effect<Response, never, R> =>
  Effect.gen(function*() {
    const raw = options.lastEventId !== undefined ? options.lastEventId : options.request?.headers.get("last-event-id") ?? null
    const text = raw === null ? "" : raw.trim()
    const after = text === "" ? 0 : /^\d{1,15}$/.test(text) ? Number(text) : undefined
    if (after === undefined) {
      return new Response(`Last-Event-ID must be an event id (a non-negative integer), got ${JSON.stringify(raw)}`, {
        status: 400,
        headers: { "content-type": "text/plain; charset=utf-8" }
      })
    }
    const include = options.include ?? (() => true)
    const frames = d.follow(runId, { after, ...(options.pollInterval === undefined ? {} : { pollInterval: options.pollInterval }) }).pipe(
      effectStream().filter((e) => include(e.event)),
      effectStream().map((e) => sseFrame(e.event, e.event._tag, e.id)),
      effectStream().catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? effectStream().failCause(cause) : effectStream().make(sseFrame({ _tag: (Cause.squash(cause) as { _tag?: string })._tag ?? "RunJournalFailed", message: String(Cause.squash(cause)) }, "error"))
      )
    )
    const context = yield* Effect.context<R>()
    const body = effectStream().toReadableStreamWith(frames.pipe(effectStream().encodeText), context)
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        "x-accel-buffering": "no",
        ...options.headers
      }
    })
  })
