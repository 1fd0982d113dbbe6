// @ts-check
/**
 * Runs: every run the studio knows (started here, sent by an application, read from trace files or
 * the durable store), newest first, refreshed as runs start, change and end. Filters by status and
 * agent; the list is virtualised, so thousands of rows scroll smoothly.
 *
 * @example
 * // routed at #/runs
 */
import { api } from "../api.js"
import { describeError, formatCount, formatDuration, formatTime, h, mount, pathPart, statusBadge } from "../dom.js"
import { virtualList } from "../virtual-list.js"

/** @typedef {import("../../api-types.ts").RunSummary} RunSummary */

const statuses = ["running", "suspended", "completed", "failed", "cancelled"]

/** The runs the list holds at most (the newest first). */
const shownRuns = 1000

/**
 * The row of one run: a link to its detail with its numbers.
 * @param {RunSummary} run
 */
export const runRow = (run) =>
  h(
    "a",
    { class: `run-row${run.parentRunId === undefined ? "" : " child-run"}`, href: `#/runs/${pathPart(run.runId)}`, "data-run-id": run.runId },
    h("span", { class: "col-status" }, statusBadge(run.status)),
    h("span", { class: "col-agent" }, run.agent, run.parentRunId === undefined ? null : h("span", { class: "muted" }, " (child)")),
    h("span", { class: "col-id mono", title: run.runId }, run.runId.slice(0, 12)),
    h("span", { class: "col-source muted" }, run.source),
    h("span", { class: "col-time" }, formatTime(run.startedAt)),
    h("span", { class: "col-num" }, formatDuration(run.durationMs ?? (run.status === "running" ? Date.now() - new Date(run.startedAt).getTime() : undefined))),
    h("span", { class: "col-num" }, formatCount(run.turns)),
    h("span", { class: "col-num" }, formatCount(run.tokens?.total)),
    h("span", { class: "col-error", title: describeError(run.error) }, describeError(run.error))
  )

/** @type {import("../app.js").Page} */
export const runsPage = (container, _params, context) => {
  const params = new URLSearchParams(sessionStorage.getItem("studio-runs-filter") ?? "")
  const status = /** @type {HTMLSelectElement} */ (h("select", { id: "filter-status" }, h("option", { value: "" }, "any"), statuses.map((value) => h("option", { value }, value))))
  status.value = params.get("status") ?? ""
  const source = /** @type {HTMLSelectElement} */ (h("select", { id: "filter-source" }, h("option", { value: "" }, "any"), ["studio", "ingest", "trace", "durable"].map((value) => h("option", { value }, value))))
  source.value = params.get("source") ?? ""
  const agent = /** @type {HTMLInputElement} */ (h("input", { id: "filter-agent", type: "search", placeholder: "agent name", value: params.get("agent") ?? "" }))
  const count = h("span", { class: "muted", "aria-live": "polite" })
  const problem = h("div")
  /** @type {RunSummary[]} */
  let runs = []
  const list = virtualList({ rowHeight: 40, label: "Runs", height: "calc(100vh - 15rem)", renderRow: (index) => runRow(/** @type {RunSummary} */ (runs[index])) })
  const empty = h("p", { class: "empty", hidden: true }, "No runs yet. Start one from the ", h("a", { href: "#/playground" }, "playground"), ", or connect an application.")

  let inFlight = false
  let again = false
  const load = async () => {
    if (inFlight) {
      again = true
      return
    }
    inFlight = true
    const query = new URLSearchParams()
    if (status.value !== "") query.set("status", status.value)
    if (agent.value.trim() !== "") query.set("agent", agent.value.trim())
    if (source.value !== "") query.set("source", source.value)
    sessionStorage.setItem("studio-runs-filter", query.toString())
    // One more than is shown: a store keeping more runs (`--max-runs`) must not read as "1,000 runs".
    query.set("limit", String(shownRuns + 1))
    try {
      const result = await api.get(`/api/runs?${query}`)
      const all = Array.isArray(result) ? /** @type {RunSummary[]} */ (result) : []
      runs = all.slice(0, shownRuns)
      mount(problem)
      count.textContent = all.length > shownRuns
        ? `more than ${shownRuns.toLocaleString("en-US")} runs: the newest ${shownRuns.toLocaleString("en-US")} shown (filter to see older ones)`
        : `${runs.length.toLocaleString("en-US")} run${runs.length === 1 ? "" : "s"}`
      empty.hidden = runs.length > 0
      list.setCount(runs.length)
    } catch (error) {
      mount(problem, context.showError(error))
    } finally {
      inFlight = false
      if (again) {
        again = false
        void load()
      }
    }
  }
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  const later = () => {
    clearTimeout(timer)
    timer = setTimeout(() => void load(), 250)
  }
  status.addEventListener("change", () => void load())
  source.addEventListener("change", () => void load())
  agent.addEventListener("input", later)

  mount(
    container,
    h("div", { class: "page-head" }, h("h1", {}, "Runs"), count),
    h(
      "div",
      { class: "filters", role: "search" },
      h("label", { for: "filter-status" }, "Status"),
      status,
      h("label", { for: "filter-agent" }, "Agent"),
      agent,
      h("label", { for: "filter-source" }, "Source"),
      source
    ),
    problem,
    h(
      "div",
      { class: "run-row run-head", "aria-hidden": "true" },
      ["Status", "Agent", "Run", "Source", "Started", "Duration", "Turns", "Tokens", "Error"].map((title) => h("span", { class: ["Duration", "Turns", "Tokens"].includes(title) ? "col-num" : "" }, title))
    ),
    list.element,
    empty
  )
  void load()
  const unsubscribe = context.onChange((change) => {
    if (change.type === "run") later()
  })
  // Durations of running runs move on their own.
  const tick = setInterval(() => {
    if (runs.some((run) => run.status === "running")) list.refresh()
  }, 1000)
  return () => {
    unsubscribe()
    clearInterval(tick)
    clearTimeout(timer)
  }
}
