/**
 * Connects an application to a running studio: a listener for `.onEvent(...)` that sends every event
 * of every run to the studio's `/api/ingest`, in batches, in the background. It never blocks or fails
 * the application's runs: events wait in a bounded queue (the oldest dropped past `maxQueue`), a batch
 * goes every `flushMs` (at once when a run ends), a studio that is down or slow costs one failed POST
 * per batch (bounded by `timeoutMs`), and its events are dropped and counted. A batch is kept under
 * the studio's body limit (`maxBodyBytes`); an event larger than that alone is sent with its long
 * strings cut (`fit-event.ts`), so a run's start, end and shape always reach the studio.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { AgentEvent, Listener } from "../../dsl/events.ts"
import { AgentConfigError } from "../../errors.ts"
import { shownValue } from "../../internal/shown-value.ts"
import type { IngestBatch } from "../server/api.ts"
import { type EventJson, toEventJson } from "../store/event-json.ts"
import { fitEventJson, utf8Bytes } from "./fit-event.ts"

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
   * the URL or as `token`. Default: the `EFFECT_AGENT_STUDIO_URL` environment variable. A value that
   * is not an `http://` or `https://` URL is refused with an `AgentConfigError`.
   */
  readonly url?: string | undefined
  readonly token?: string | undefined
  /** Milliseconds between batches (default 250). */
  readonly flushMs?: number | undefined
  /** Events kept while the studio cannot be reached (default 10,000; the oldest are dropped). */
  readonly maxQueue?: number | undefined
  /** Milliseconds one POST may take (default 2,000). */
  readonly timeoutMs?: number | undefined
  /**
   * The largest POST body, in bytes (default 8 MiB, the studio's own default `maxBodyBytes`; at
   * least 1,024). Batches stay under it, and an event larger than that alone has its long strings
   * cut. A studio that takes less answers 413: the batch is sent again in halves, and what follows
   * under the smaller size.
   */
  readonly maxBodyBytes?: number | undefined
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

/** An event waiting to be sent, and the time it happened. */
interface Queued {
  readonly at: number
  readonly event: EventJson
}

/** A queued event as one item of a body's `events`: its JSON and that JSON's size. */
interface Entry extends Queued {
  readonly json: string
  readonly bytes: number
}

/** The smallest body limit: room for any event's outline. */
const smallestBody = 1024

/** Events per POST, whatever their size: the studio stores a batch in one go. */
const perPost = 500

/**
 * A listener that sends the runs it sees to a studio. Two lines in your code. A malformed URL (in
 * `url` or `EFFECT_AGENT_STUDIO_URL`) or option throws an `AgentConfigError` here, at once; after
 * that nothing the studio does (or fails to do) reaches your runs.
 *
 * @example
 * ```ts
 * import { studioHooks } from "effect-agent-dsl/studio"
 * const watched = calculator.onEvent(studioHooks({ url: "http://127.0.0.1:4111/?token=…" }))
 * ```
 */
export const studioHooks = (options: StudioHooksOptions = {}): StudioHooks => {
  const target = studioUrl(options.url)
  const token = options.token ?? target?.searchParams.get("token") ?? undefined
  const endpoint = target === undefined ? undefined : new URL("/api/ingest", target).toString()
  const flushMs = checked("flushMs", options.flushMs, 250, (n) => n >= 0, "a number of milliseconds >= 0")
  const maxQueue = checked("maxQueue", options.maxQueue, 10_000, (n) => Number.isInteger(n) && n >= 1, "a whole number >= 1")
  const timeoutMs = checked("timeoutMs", options.timeoutMs, 2000, (n) => n > 0, "a number of milliseconds > 0")
  const maxBodyBytes = checked("maxBodyBytes", options.maxBodyBytes, 8 * 1024 * 1024, (n) => Number.isInteger(n) && n >= smallestBody, `a whole number of bytes >= ${smallestBody}`)
  const processName = options.process ?? `pid ${globalThis.process?.pid ?? "?"}`
  const headers = { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) }
  // A body is `{"process":…,"events":[…]}`: this much, plus each item and its comma.
  const envelope = utf8Bytes(JSON.stringify({ process: processName, events: [] } satisfies IngestBatch))
  /** The body limit: `maxBodyBytes`, or less once the studio refused a body as too large. */
  let limit = maxBodyBytes
  let queue: Array<Queued> = []
  // Where the queue starts: the oldest events past `maxQueue` are dropped by moving it, and the array
  // is cut only once that many are dropped (cutting it at every event was a copy of the whole queue each).
  let head = 0
  let dropped = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let inFlight: Promise<void> = Promise.resolve()

  const entryOf = ({ at, event }: Queued): Entry => {
    const head = `{"at":${JSON.stringify(at)},"event":`
    const json = `${head}${fitEventJson(event, limit - envelope - utf8Bytes(head) - 2)}}`
    return { at, event, json, bytes: utf8Bytes(json) }
  }

  const bodyBytes = (batch: ReadonlyArray<Entry>): number => batch.reduce((sum, entry) => sum + entry.bytes + 1, envelope)

  const send = async (batch: ReadonlyArray<Entry>): Promise<void> => {
    if (endpoint === undefined || batch.length === 0) return
    let status: number
    try {
      const response = await fetch(endpoint, {
        method: "POST",
        headers,
        // The same shape as `IngestBatch`, from the items' JSON made once.
        body: `{"process":${JSON.stringify(processName)},"events":[${batch.map((entry) => entry.json).join(",")}]}`,
        signal: AbortSignal.timeout(timeoutMs)
      })
      await response.body?.cancel().catch(() => {})
      status = response.status
    } catch {
      dropped += batch.length
      return
    }
    if (status === 413) return sendSmaller(batch)
    if (status < 200 || status > 299) dropped += batch.length
  }

  // The studio takes less than `maxBodyBytes` (started with a smaller one, or behind a proxy): the
  // batch goes again in halves, a lone event cut further, and what follows under half the refused size.
  const sendSmaller = async (batch: ReadonlyArray<Entry>): Promise<void> => {
    limit = Math.min(limit, Math.floor(bodyBytes(batch) / 2))
    if (limit < smallestBody) {
      dropped += batch.length
      return
    }
    if (batch.length > 1) {
      const half = Math.ceil(batch.length / 2)
      await send(batch.slice(0, half))
      return send(batch.slice(half))
    }
    const smaller = entryOf(batch[0]!)
    if (smaller.bytes < batch[0]!.bytes) return send([smaller])
    dropped += 1
  }

  // Batches go one after the other, so the studio receives a run's events in order; each under the
  // body limit and at most `perPost` events, so a backlog or a large event never makes a body the
  // studio refuses as too large.
  const sendAll = async (taken: ReadonlyArray<Queued>): Promise<void> => {
    let batch: Array<Entry> = []
    for (const queued of taken) {
      let entry: Entry
      try {
        entry = entryOf(queued)
      } catch {
        dropped += 1
        continue
      }
      if (batch.length > 0 && (batch.length >= perPost || bodyBytes(batch) + entry.bytes + 1 > limit)) {
        await send(batch)
        batch = []
      }
      batch.push(entry)
    }
    await send(batch)
  }

  const flush = (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    const taken = head === 0 ? queue : queue.slice(head)
    queue = []
    head = 0
    inFlight = inFlight.then(() => sendAll(taken))
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
      if (queue.length - head > maxQueue) {
        // The oldest goes (its slot freed at once, the array cut once `maxQueue` of them are gone).
        queue[head++] = undefined as unknown as Queued
        dropped += 1
        if (head >= maxQueue) {
          queue = queue.slice(head)
          head = 0
        }
      }
      if (event._tag === "RunEnd" && event.parentRunId === undefined) void flush()
      else schedule()
    })) as StudioHooks
  Object.defineProperty(listener, "flush", { value: flush })
  Object.defineProperty(listener, "dropped", { get: () => dropped })
  return listener
}

/**
 * The studio's URL from `url`, else `EFFECT_AGENT_STUDIO_URL`; undefined when neither is set (nothing
 * is sent). A value that is not an `http(s)://` URL (`localhost:4111`, a scheme left out) is refused
 * here, naming where it came from: it is a mistake to fix, not a studio that happens to be down.
 */
const studioUrl = (given: string | undefined): URL | undefined => {
  const raw = given ?? globalThis.process?.env?.EFFECT_AGENT_STUDIO_URL
  if (raw === undefined || raw === "") return undefined
  let parsed: URL | undefined
  try {
    parsed = new URL(raw)
  } catch {
    parsed = undefined
  }
  if (parsed !== undefined && (parsed.protocol === "http:" || parsed.protocol === "https:")) return parsed
  // The value as given, its token hidden: error messages end up in logs.
  const shown = shownValue(typeof raw === "string" ? raw.replace(/(token=)[^&#]*/gi, "$1…") : raw)
  throw new AgentConfigError({
    subject: given === undefined ? "EFFECT_AGENT_STUDIO_URL" : "studioHooks({ url })",
    reason: `must be the URL the studio printed, with its scheme, such as "http://127.0.0.1:4111/?token=…"; got ${shown}`
  })
}

/** An option's value, or its default; a value out of range is refused with what it should be. */
const checked = (name: string, value: number | undefined, fallback: number, valid: (n: number) => boolean, should: string): number => {
  if (value === undefined) return fallback
  if (typeof value === "number" && Number.isFinite(value) && valid(value)) return value
  throw new AgentConfigError({ subject: `studioHooks({ ${name} })`, reason: `must be ${should}, got ${shownValue(value)}` })
}
