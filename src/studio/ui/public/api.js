// @ts-check
/**
 * Talks to the studio's server: JSON calls and Server-Sent Events, all carrying the token the studio
 * printed at start (`?token=` in the first URL; kept for the tab in sessionStorage and sent as
 * `Authorization: Bearer`). Streams are read with `fetch` rather than `EventSource` so that the token
 * travels in a header and the first connection can send `Last-Event-ID` (resume after the events the
 * page already has).
 *
 * @example
 * const agents = await api.get("/api/agents")
 */

import { readEventStream } from "./sse.js"

/** @typedef {import("../api-types.ts").StoredEvent} StoredEvent */

const tokenKey = "effect-agent-studio-token"

/** Reads the token from the address (then removes it from the address bar) or from the tab's storage. */
const readToken = () => {
  const url = new URL(location.href)
  const fromUrl = url.searchParams.get("token")
  if (fromUrl !== null && fromUrl !== "") {
    try {
      sessionStorage.setItem(tokenKey, fromUrl)
    } catch {
      // storage refused (private mode): the token lives in memory only
    }
    url.searchParams.delete("token")
    history.replaceState(null, "", url.pathname + url.search + url.hash)
    return fromUrl
  }
  try {
    return sessionStorage.getItem(tokenKey) ?? undefined
  } catch {
    return undefined
  }
}

let token = readToken()

/** The error a failed call rejects with: the HTTP status and the server's `{ error, details }`. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {unknown} [details]
   */
  constructor(status, message, details) {
    super(message)
    this.name = "ApiError"
    this.status = status
    this.details = details
  }
}

/** @param {HeadersInit} [extra] */
const headers = (extra) => {
  const result = new Headers(extra)
  if (token !== undefined) result.set("Authorization", `Bearer ${token}`)
  return result
}

/**
 * @param {Response} response
 * @returns {Promise<unknown>}
 */
const readBody = async (response) => {
  const text = await response.text()
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
const call = async (method, path, body) => {
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? undefined : { "Content-Type": "application/json" }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const payload = await readBody(response)
  if (!response.ok) {
    const record = typeof payload === "object" && payload !== null ? /** @type {{ error?: unknown, message?: unknown, details?: unknown }} */ (payload) : {}
    const message = typeof record.message === "string" ? record.message : typeof record.error === "string" ? record.error : typeof payload === "string" && payload !== "" ? payload : `HTTP ${response.status}`
    throw new ApiError(response.status, message, record.details)
  }
  return payload
}

export const api = {
  /**
   * @template T
   * @param {string} path
   * @returns {Promise<T>}
   */
  get: (path) => /** @type {Promise<T>} */ (call("GET", path)),
  /**
   * @template T
   * @param {string} path
   * @param {unknown} [body]
   * @returns {Promise<T>}
   */
  post: (path, body) => /** @type {Promise<T>} */ (call("POST", path, body ?? {})),
  /** Whether a token is known (else the server will answer 401). */
  hasToken: () => token !== undefined,
  /** @param {string} value */
  setToken: (value) => {
    token = value
    try {
      sessionStorage.setItem(tokenKey, value)
    } catch {
      // memory only
    }
  }
}

/** A stream silent for this many keep-alive intervals counts as dropped (one late ping is no drop). */
const silentIntervals = 2.5

/**
 * The keep-alive interval a stream's response names (`x-studio-keep-alive-ms`), if it names one.
 * @param {Response} response
 */
const keepAliveOf = (response) => {
  const value = Number(response.headers.get("x-studio-keep-alive-ms") ?? Number.NaN)
  return Number.isFinite(value) && value > 0 ? value : undefined
}

/**
 * Follows a Server-Sent Events endpoint until `close()` or until the server ends it for good
 * (`final()` says so, e.g. after a run's `RunEnd`); reconnects after a dropped connection with
 * `Last-Event-ID` so that no event is lost or repeated. A connection that stays open but brings
 * nothing, not even the server's keep-alive, for 2.5 of its intervals is dropped and reconnected the
 * same way (a sleeping laptop, a proxy that holds a dead stream). A refusal of the token (401, 403)
 * ends it with `onRefused`.
 * @param {string} path
 * @param {{
 *   lastEventId?: string | undefined,
 *   onData: (data: unknown, id: string | undefined) => void,
 *   onState?: (state: "open" | "reconnecting" | "ended") => void,
 *   onRefused?: (error: ApiError) => void,
 *   final?: (data: unknown) => boolean
 * }} options
 * @returns {{ close: () => void }}
 */
export const follow = (path, options) => {
  const controller = new AbortController()
  let lastEventId = options.lastEventId
  let ended = false
  // The server's own interval once a response named it; until then, its default.
  let keepAliveMs = 15_000
  const run = async () => {
    let delay = 500
    while (!controller.signal.aborted && !ended) {
      // Each connection can be dropped on its own (when silent) without closing the whole `follow`.
      const attempt = new AbortController()
      const abortAttempt = () => attempt.abort()
      controller.signal.addEventListener("abort", abortAttempt, { once: true })
      let silent = false
      let heardAt = Date.now()
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let watchdog
      // Compares times rather than trusting the timer alone: a throttled background tab fires it late.
      const watch = () => {
        clearTimeout(watchdog)
        const quiet = Date.now() - heardAt
        const limit = keepAliveMs * silentIntervals
        if (quiet < limit) watchdog = setTimeout(watch, limit - quiet)
        else {
          silent = true
          attempt.abort()
        }
      }
      watch()
      try {
        const response = await fetch(path, {
          headers: headers({ Accept: "text/event-stream", ...(lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId }) }),
          signal: attempt.signal
        })
        if (response.status === 204 || response.status === 404) {
          ended = true
          break
        }
        if (!response.ok || response.body === null) throw new ApiError(response.status, `HTTP ${response.status}`)
        keepAliveMs = keepAliveOf(response) ?? keepAliveMs
        heardAt = Date.now()
        watch()
        options.onState?.("open")
        delay = 500
        let received = 0
        await readEventStream(response.body, (message) => {
          received += 1
          if (message.id !== undefined) lastEventId = message.id
          if (message.event === "end") {
            ended = true
            return
          }
          /** @type {unknown} */
          let data
          try {
            data = JSON.parse(message.data)
          } catch {
            return
          }
          options.onData(data, message.id)
          if (options.final?.(data) === true) ended = true
        }, attempt.signal, () => {
          heardAt = Date.now()
        })
        // A closed stream that had nothing new for us is a finished one (its run ended before we came);
        // one closed mid-way, or dropped for its silence, is reconnected with Last-Event-ID.
        if (options.final !== undefined && received === 0 && !silent) ended = true
      } catch (error) {
        if (controller.signal.aborted) break
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
          // The token is wrong (a studio restarted with a new one): retrying cannot help, asking can.
          ended = true
          options.onRefused?.(error)
          break
        }
      } finally {
        clearTimeout(watchdog)
        controller.signal.removeEventListener("abort", abortAttempt)
      }
      if (ended || controller.signal.aborted) break
      options.onState?.("reconnecting")
      await new Promise((resolve) => setTimeout(resolve, delay))
      delay = Math.min(delay * 2, 10_000)
    }
    if (!controller.signal.aborted) options.onState?.("ended")
  }
  void run()
  return { close: () => controller.abort() }
}
