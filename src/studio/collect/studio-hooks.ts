/**
 * Connects an application to a running studio: a listener for `.onEvent(...)` that sends every event
 * of every run to the studio's `/api/ingest`, in batches, in the background. It never blocks or fails
 * the application's runs: events wait in a bounded queue (the oldest dropped past `maxQueue`), a batch
 * goes every `flushMs` (at once when a run ends), a studio that is down or slow costs one failed POST
 * per batch (bounded by `timeoutMs`), and its events are dropped and counted.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { AgentEvent, Listener } from "../../dsl/events.ts"
import type { IngestBatch } from "../server/api.ts"
import { type EventJson, toEventJson } from "../store/event-json.ts"

/**
 * Options of {@link studioHooks}.
 *
 * @example
 * ```ts
 * const options: StudioHooksOptions = { url: "http://127.0.0.1:4111/?token=…", flushMs: 500 }
 * ```
 */
export interface StudioHooksOptions {
  /**
   * The studio's URL as it printed it (`http://127.0.0.1:4111/?token=…`); the token may be given in
   * the URL or as `token`. Default: the `EFFECT_AGENT_STUDIO_URL` environment variable.
   */
  readonly url?: string | undefined
  readonly token?: string | undefined
  /** Milliseconds between batches (default 250). */
  readonly flushMs?: number | undefined
  /** Events kept while the studio cannot be reached (default 10,000; the oldest are dropped). */
  readonly maxQueue?: number | undefined
  /** Milliseconds one POST may take (default 2,000). */
  readonly timeoutMs?: number | undefined
  /** Names the sending process in the studio (default `pid <n>`). */
  readonly process?: string | undefined
}

/**
 * The listener, with ways to wait for delivery and to read what was lost.
 *
 * @example
 * ```ts
 * const hooks: StudioHooks = studioHooks()
 * await hooks.flush(); console.log(hooks.dropped)
 * ```
 */
export interface StudioHooks extends Listener<AgentEvent> {
  /** Sends what is queued now; resolves when the studio answered (or the POST failed). */
  flush(): Promise<void>
  /** Events dropped so far (queue full, the studio unreachable, or no studio URL given). */
  readonly dropped: number
}

/**
 * A listener that sends the runs it sees to a studio. Two lines in your code:
 *
 * @example
 * ```ts
 * import { studioHooks } from "effect-agent-dsl/studio"
 * const watched = calculator.onEvent(studioHooks({ url: "http://127.0.0.1:4111/?token=…" }))
 * ```
 */
export const studioHooks = (options: StudioHooksOptions = {}): StudioHooks => {
  const raw = options.url ?? globalThis.process?.env?.EFFECT_AGENT_STUDIO_URL
  const target = raw === undefined || raw === "" ? undefined : new URL(raw)
  const token = options.token ?? target?.searchParams.get("token") ?? undefined
  const endpoint = target === undefined ? undefined : new URL("/api/ingest", target).toString()
  const flushMs = options.flushMs ?? 250
  const maxQueue = options.maxQueue ?? 10_000
  const timeoutMs = options.timeoutMs ?? 2000
  const processName = options.process ?? `pid ${globalThis.process?.pid ?? "?"}`
  const perPost = 500
  let queue: Array<{ at: number; event: EventJson }> = []
  let dropped = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let inFlight: Promise<void> = Promise.resolve()

  const send = async (batch: ReadonlyArray<{ at: number; event: EventJson }>): Promise<void> => {
    if (endpoint === undefined || batch.length === 0) return
    try {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        body: JSON.stringify({ process: processName, events: batch } satisfies IngestBatch),
        signal: AbortSignal.timeout(timeoutMs)
      })
      await response.body?.cancel().catch(() => {})
      if (!response.ok) dropped += batch.length
    } catch {
      dropped += batch.length
    }
  }

  const flush = (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    const batch = queue
    queue = []
    // Batches go one after the other, so the studio receives a run's events in order; at most
    // `perPost` events each, so a backlog never makes a body the studio refuses as too large.
    for (let at = 0; at < batch.length; at += perPost) {
      const part = batch.slice(at, at + perPost)
      inFlight = inFlight.then(() => send(part))
    }
    return inFlight
  }

  const schedule = () => {
    if (timer !== undefined) return
    timer = setTimeout(() => void flush(), flushMs)
    // An application that is done may exit: a pending batch does not keep it alive.
    ;(timer as { unref?: () => void }).unref?.()
  }

  const listener = ((event: AgentEvent) =>
    Effect.map(Clock.currentTimeMillis, (at) => {
      // No studio configured: nothing is sent, and `dropped` says so.
      if (endpoint === undefined) {
        dropped += 1
        return
      }
      queue.push({ at, event: toEventJson(event) })
      if (queue.length > maxQueue) {
        dropped += queue.length - maxQueue
        queue = queue.slice(queue.length - maxQueue)
      }
      if (event._tag === "RunEnd" && event.parentRunId === undefined) void flush()
      else schedule()
    })) as StudioHooks
  Object.defineProperty(listener, "flush", { value: flush })
  Object.defineProperty(listener, "dropped", { get: () => dropped })
  return listener
}
