// @ts-check
/**
 * The studio's shell: navigation, hash routing (`#/runs/<id>`), the live change feed
 * (`/api/events`) that lists subscribe to, and the token prompt shown when the server refuses a call.
 * Each page is a function `(container, params, context) => cleanup`.
 *
 * @example
 * // index.html: <script type="module" src="./app.js"></script>
 */
import { api, ApiError, follow } from "./api.js"
import { h, mount } from "./dom.js"
import { approvalsPage } from "./pages/approvals.js"
import { playgroundPage } from "./pages/playground.js"
import { runDetailPage } from "./pages/run-detail.js"
import { runsPage } from "./pages/runs.js"
import { sessionsPage } from "./pages/sessions.js"

/** @typedef {import("../api-types.ts").ListChange} ListChange */
/** @typedef {import("../api-types.ts").PendingApproval} PendingApproval */
/**
 * @typedef {{
 *   onChange: (listener: (change: ListChange) => void) => () => void,
 *   navigate: (hash: string) => void,
 *   showError: (error: unknown) => HTMLElement,
 *   refreshApprovalCount: () => void
 * }} PageContext
 */
/** @typedef {(container: HTMLElement, params: string[], context: PageContext) => (() => void) | void} Page */

/** @type {Array<{ pattern: RegExp, page: Page, nav: string, title: string }>} */
const routes = [
  { pattern: /^#\/playground(?:\/([^/]+))?$/, page: playgroundPage, nav: "playground", title: "Playground" },
  { pattern: /^#\/runs\/([^/]+)$/, page: runDetailPage, nav: "runs", title: "Run" },
  { pattern: /^#\/runs$/, page: runsPage, nav: "runs", title: "Runs" },
  { pattern: /^#\/approvals$/, page: approvalsPage, nav: "approvals", title: "Approvals" },
  { pattern: /^#\/sessions(?:\/([^/]+))?$/, page: sessionsPage, nav: "sessions", title: "Sessions" }
]

/** @type {Set<(change: ListChange) => void>} */
const listeners = new Set()
const main = /** @type {HTMLElement} */ (document.getElementById("main"))
const approvalCount = /** @type {HTMLElement} */ (document.getElementById("approval-count"))
const liveState = /** @type {HTMLElement} */ (document.getElementById("live-state"))

/**
 * The token prompt, for a page opened without `?token=` (or with a stale one).
 * @param {() => void} retry
 */
const tokenPrompt = (retry) => {
  const input = /** @type {HTMLInputElement} */ (h("input", { id: "token-input", type: "password", autocomplete: "off", required: true }))
  return h(
    "form",
    {
      class: "card token-form",
      onsubmit: (/** @type {Event} */ event) => {
        event.preventDefault()
        if (input.value.trim() === "") return
        api.setToken(input.value.trim())
        retry()
      }
    },
    h("h2", {}, "Token needed"),
    h("p", {}, "The studio printed a URL with a token when it started. Open that URL, or paste the token here."),
    h("label", { for: "token-input" }, "Token"),
    input,
    h("button", { type: "submit", class: "primary" }, "Connect")
  )
}

/** @param {unknown} error */
const showError = (error) => {
  if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
    return tokenPrompt(() => {
      startFeed()
      refreshApprovalCount()
      route()
    })
  }
  const message = error instanceof Error ? error.message : String(error)
  const details = error instanceof ApiError && error.details !== undefined ? h("pre", { class: "mono" }, JSON.stringify(error.details, null, 2).slice(0, 4000)) : null
  return h("div", { class: "error-box", role: "alert" }, h("strong", {}, "Error: "), message, details)
}

const refreshApprovalCount = () => {
  api.get("/api/approvals").then(
    (/** @type {unknown} */ list) => {
      const count = Array.isArray(list) ? list.reduce((sum, item) => sum + (Array.isArray(item.calls) ? item.calls.length : 0), 0) : 0
      approvalCount.textContent = count === 0 ? "" : String(count)
      approvalCount.hidden = count === 0
      approvalCount.setAttribute("aria-label", `${count} pending`)
    },
    () => undefined
  )
}

/** @type {PageContext} */
const context = {
  onChange: (listener) => {
    listeners.add(listener)
    return () => listeners.delete(listener)
  },
  navigate: (hash) => {
    location.hash = hash
  },
  showError,
  refreshApprovalCount
}

/** @type {(() => void) | void} */
let cleanup

/** A part of the hash decoded, or undefined when it holds a malformed %-escape. */
const decodedPart = (/** @type {string} */ part) => {
  try {
    return decodeURIComponent(part)
  } catch {
    return undefined
  }
}
const route = () => {
  if (typeof cleanup === "function") cleanup()
  cleanup = undefined
  const hash = location.hash === "" || location.hash === "#" || location.hash === "#/" ? "#/runs" : location.hash
  const match = routes.map((candidate) => ({ candidate, found: candidate.pattern.exec(hash) })).find((entry) => entry.found !== null)
  for (const link of document.querySelectorAll("nav a[data-nav]")) {
    const active = match !== undefined && link.getAttribute("data-nav") === match.candidate.nav
    if (active) link.setAttribute("aria-current", "page")
    else link.removeAttribute("aria-current")
  }
  // A part with a broken %-escape (`%E0%A4%A`, typed or pasted) names no run: not found, not a crash.
  const params = match?.found?.slice(1).map((part) => (part === undefined ? "" : decodedPart(part)))
  if (match === undefined || match.found === null || params === undefined || params.includes(undefined)) {
    const why = params?.includes(undefined) ? " (its address has a broken %-escape)" : ""
    document.title = "Not found · effect-agent studio"
    mount(main, h("div", { class: "card" }, h("h1", {}, "Not found"), h("p", {}, "No page at ", h("code", {}, hash), `${why}. `), h("a", { href: "#/runs" }, "Go to runs")))
    return
  }
  document.title = `${match.candidate.title} · effect-agent studio`
  mount(main)
  try {
    cleanup = match.candidate.page(main, /** @type {Array<string>} */ (params), context)
  } catch (error) {
    mount(main, showError(error))
  }
  main.focus({ preventScroll: true })
}

window.addEventListener("hashchange", route)
route()
refreshApprovalCount()

/** @type {{ close: () => void } | undefined} */
let feed
/** Follows the list changes (again, after a token was given: the first attempt was refused). */
const startFeed = () => {
  feed?.close()
  // The feed has no ids to resume from: what changed while it was down (a studio restarted, its
  // runs read back from its file) is never sent, so every list reloads once it is back.
  let dropped = false
  feed = follow("/api/events", {
    onData: (data) => {
      const change = /** @type {ListChange} */ (data)
      if (change.type === "approval") refreshApprovalCount()
      for (const listener of listeners) listener(change)
    },
    onState: (state) => {
      liveState.textContent = state === "open" ? "live" : state === "reconnecting" ? "reconnecting…" : "offline"
      liveState.className = `live-state live-${state}`
      if (state === "reconnecting") dropped = true
      if (state === "open" && dropped) {
        dropped = false
        refreshApprovalCount()
        for (const listener of [...listeners]) {
          listener({ type: "run", runId: "" })
          listener({ type: "approval", runId: "" })
        }
      }
    },
    // A studio restarted under a new token (the CLI makes one at each start) refuses the old one:
    // ask for the new one instead of going quietly offline.
    onRefused: (error) => {
      if (document.getElementById("token-input") !== null) return
      if (typeof cleanup === "function") cleanup()
      cleanup = undefined
      mount(main, showError(error))
    }
  })
}
startFeed()
