// @ts-check
/**
 * Run detail: what happened in one run, live while it runs. The stored events and the live stream
 * (`/api/runs/:id/stream`, resumed after the last stored event) go through one fold (`run-view.js`);
 * regions are rebuilt at most once per animation frame, and only the ones that changed, so a stream
 * of text deltas or a 5,000-event run never blocks the page.
 *
 * @example
 * // routed at #/runs/<runId>
 */
import { api, follow } from "../api.js"
import { describeError, formatTime, h, mount, pathPart, statusBadge } from "../dom.js"
import { jsonView } from "../json-view.js"
import { applyEvent, emptyRunView, isRunEnd } from "../run-view.js"
import { virtualList } from "../virtual-list.js"
import { budgetBars, budgetLine, summaryFacts, turnView, waterfall } from "./run-view-parts.js"

/** @typedef {import("../../api-types.ts").RunDetail} RunDetail */
/** @typedef {import("../../api-types.ts").StoredEvent} StoredEvent */

/**
 * The child runs of a composition, nested, each with its status and own budgets (depth and count
 * bounded: a runaway composition does not turn into thousands of requests).
 * @param {ReadonlyArray<string>} children
 * @param {number} depth
 * @param {{ left: number }} allowance
 * @returns {Promise<HTMLElement>}
 */
const childTree = async (children, depth, allowance) => {
  const items = await Promise.all(children.map(async (childId) => {
    if (allowance.left <= 0 || depth > 6) return h("li", {}, h("a", { href: `#/runs/${pathPart(childId)}` }, childId))
    allowance.left -= 1
    try {
      const child = /** @type {RunDetail} */ (await api.get(`/api/runs/${pathPart(childId)}`))
      return h(
        "li",
        { class: "child" },
        h("a", { href: `#/runs/${pathPart(childId)}` }, statusBadge(child.summary.status), " ", h("strong", {}, child.summary.agent), " ", h("span", { class: "mono muted" }, childId.slice(0, 12))),
        Object.keys(child.budgets ?? {}).length === 0 ? null : budgetLine(child.budgets),
        child.children.length === 0 ? null : await childTree(child.children, depth + 1, allowance)
      )
    } catch {
      return h("li", {}, h("a", { href: `#/runs/${pathPart(childId)}` }, childId), h("span", { class: "muted" }, " (not found)"))
    }
  }))
  return h("ul", { class: "child-tree" }, items)
}

/** @type {import("../app.js").Page} */
export const runDetailPage = (container, params, context) => {
  const runId = params[0] ?? ""
  const path = `/api/runs/${pathPart(runId)}`
  /** @type {Set<string>} */
  const openKeys = new Set()
  let view = emptyRunView()
  /** @type {StoredEvent[]} */
  let events = []
  /** @type {RunDetail | undefined} */
  let detail
  /** @type {{ close: () => void } | undefined} */
  let stream
  let disposed = false

  const head = h("div", { class: "page-head" })
  const facts = h("div")
  const outcome = h("div")
  const budgets = h("section", { class: "card", "aria-labelledby": "budgets-title" })
  const children = h("section", { class: "card", "aria-labelledby": "children-title", hidden: true })
  const timeline = h("section", { class: "card", "aria-labelledby": "timeline-title" })
  const turns = h("div", { class: "turns" })
  const turnsSection = h("section", { class: "card", "aria-labelledby": "turns-title" }, h("h2", { id: "turns-title" }, "Turns"), turns)
  /** @type {Map<number, HTMLElement>} */
  const turnElements = new Map()
  // Turns are built 50 at a time: a run of a thousand turns costs the first fifty until asked.
  const turnPage = 50
  let turnLimit = turnPage
  const moreTurns = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "more-turns", onclick: () => {
    turnLimit += turnPage
    dirtyAll = true
    schedule()
  } }, ""))
  const selected = h("div", { class: "event-detail" }, h("p", { class: "muted" }, "Choose an event to see it as JSON."))
  let selectedIndex = -1
  const rawList = virtualList({
    rowHeight: 28,
    label: "Raw events",
    height: "24rem",
    renderRow: (index) => {
      const stored = /** @type {StoredEvent} */ (events[index])
      const tag = String(/** @type {{ _tag?: unknown }} */ (stored.event)?._tag ?? "?")
      return h(
        "button",
        { type: "button", class: `event-row${index === selectedIndex ? " selected" : ""}`, "aria-pressed": index === selectedIndex ? "true" : "false", onclick: () => {
          selectedIndex = index
          mount(selected, h("h4", {}, `#${stored.id} ${tag} · ${formatTime(stored.at)}`), jsonView(stored.event, { open: true }))
          rawList.refresh()
        } },
        h("span", { class: "mono muted" }, String(stored.id)),
        h("span", { class: "event-tag" }, tag),
        h("span", { class: "muted" }, formatTime(stored.at))
      )
    }
  })
  const rawCount = h("span", { class: "muted" })
  const live = h("span", { class: "live-state", "aria-live": "polite" })

  const stopButton = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "danger", onclick: async () => {
    stopButton.disabled = true
    try {
      await api.post(`${path}/stop`)
      live.textContent = "stopping…"
    } catch (error) {
      outcome.prepend(context.showError(error))
      stopButton.disabled = false
    }
  } }, "Stop run"))

  const renderHead = () => {
    const summary = detail?.summary
    const status = view.ended ? (view.outcome === "Success" ? "completed" : view.outcome === "Suspended" ? "suspended" : view.outcome === "Interrupted" ? "cancelled" : view.outcome === "Failure" ? "failed" : summary?.status ?? "running") : summary?.status === "suspended" ? "suspended" : "running"
    mount(
      head,
      h("h1", {}, summary?.agent ?? view.agent ?? "Run", " ", statusBadge(status)),
      h("span", { class: "mono muted" }, runId),
      view.parentRunId ?? summary?.parentRunId ? h("a", { href: `#/runs/${pathPart(String(view.parentRunId ?? summary?.parentRunId))}` }, "↑ parent run") : null,
      live,
      // Only the studio's own runs can be stopped from here; an application's runs run in its process.
      !view.ended && summary?.status === "running" && summary.source === "studio" ? stopButton : null
    )
    if (summary !== undefined) mount(facts, summaryFacts({ ...summary, status: /** @type {any} */ (status) }))
    const parts = []
    if (view.skill !== undefined) parts.push(h("p", {}, "Skill ", h("strong", {}, view.skill), view.skillHow === undefined ? null : h("span", { class: "muted" }, ` (chosen: ${view.skillHow})`)))
    if (view.compositeKind !== undefined) parts.push(h("p", {}, "Composite ", h("strong", {}, view.compositeKind)))
    if (view.input !== undefined) parts.push(h("div", { class: "io" }, h("h3", {}, "Input"), jsonView(view.input, { open: true })))
    if (view.outcome === "Success") parts.push(h("div", { class: "io" }, h("h3", {}, "Output"), typeof view.output === "string" ? h("div", { class: "answer-text output" }, view.output.length > 20_000 ? view.output.slice(0, 20_000) + "…" : view.output) : jsonView(view.output, { open: true })))
    if (view.outcome === "Failure") parts.push(h("div", { class: "error-box", role: "alert" }, h("strong", {}, "Failed: "), describeError(view.error), jsonView(view.error)))
    if (view.outcome === "Suspended") parts.push(h("div", { class: "notice" }, `Waiting for ${view.pending.length} decision${view.pending.length === 1 ? "" : "s"}. `, h("a", { href: "#/approvals" }, "Open the approvals inbox")))
    if (view.outcome === "Interrupted") parts.push(h("div", { class: "notice" }, "The run was stopped."))
    const decisions = detail?.decisions ?? []
    if (decisions.length > 0) {
      parts.push(h(
        "div",
        { class: "io decisions" },
        h("h3", {}, "Decisions"),
        h("ul", {}, decisions.map((record) =>
          h(
            "li",
            {},
            h("strong", {}, record.decidedBy),
            " ",
            h("span", { class: `badge decision-${record.decision}` }, record.decision),
            " ",
            h("code", {}, record.tool ?? record.callId),
            record.reason === undefined ? null : ` — ${record.reason}`,
            h("span", { class: "muted" }, ` · ${formatTime(record.at)}`),
            record.arguments === undefined ? null : jsonView(record.arguments, { label: "arguments decided" })
          )))
      ))
    }
    if (view.budget.length > 0) parts.push(h("div", { class: "io" }, h("h3", {}, "Budget events"), jsonView(view.budget)))
    if (view.hookFailures.length > 0) parts.push(h("div", { class: "io" }, h("h3", {}, "Hook failures"), jsonView(view.hookFailures)))
    mount(outcome, ...parts)
  }

  const renderBudgets = () => {
    mount(budgets, h("h2", { id: "budgets-title" }, "Budgets"), budgetBars(detail?.budgets ?? {}))
  }

  /** @param {Set<number>} dirty */
  const renderTurns = (dirty) => {
    const requests = detail?.requests ?? []
    mount(timeline, h("h2", { id: "timeline-title" }, "Timeline"), waterfall(view, requests))
    const all = [...(view.routing === undefined ? [] : [view.routing]), ...view.turns]
    const lastTurn = view.turns.at(-1)?.turn
    const left = all.length - turnLimit
    if (left > 0) {
      moreTurns.textContent = `Show ${Math.min(turnPage, left)} more turns (${left.toLocaleString("en-US")} not shown)`
      turns.append(moreTurns)
    } else moreTurns.remove()
    for (const turn of all.slice(0, turnLimit)) {
      if (!dirty.has(turn.turn) && turnElements.has(turn.turn)) continue
      const element = turnView(turn, requests, openKeys, !view.ended && turn.turn === lastTurn)
      const previous = turnElements.get(turn.turn)
      if (previous !== undefined) previous.replaceWith(element)
      else turns.insertBefore(element, moreTurns.isConnected ? moreTurns : null)
      turnElements.set(turn.turn, element)
    }
  }

  let frame = 0
  /** @type {Set<number>} */
  let dirtyTurns = new Set()
  let dirtyAll = true
  const schedule = () => {
    if (frame === 0 && !disposed) frame = requestAnimationFrame(flush)
  }
  const flush = () => {
    frame = 0
    renderHead()
    renderTurns(dirtyAll ? new Set([0, ...view.turns.map((turn) => turn.turn)]) : dirtyTurns)
    dirtyTurns = new Set()
    dirtyAll = false
    turnsSection.hidden = view.turns.length === 0 && view.routing === undefined
    rawCount.textContent = `${events.length.toLocaleString("en-US")} events`
    rawList.setCount(events.length, { follow: !view.ended })
  }

  /** @param {StoredEvent} stored */
  const take = (stored) => {
    events.push(stored)
    view = applyEvent(view, stored.event, stored.at)
    const turn = /** @type {{ turn?: unknown }} */ (stored.event)?.turn
    if (typeof turn === "number") dirtyTurns.add(turn)
    else if (view.turns.length > 0) dirtyTurns.add(/** @type {number} */ (view.turns.at(-1)?.turn))
  }

  const refreshDetail = async () => {
    try {
      const fresh = /** @type {RunDetail} */ (await api.get(path))
      if (disposed) return
      detail = fresh
      // A resumed run appends events: take the ones we have not seen.
      const known = new Set(events.map((stored) => String(stored.id)))
      for (const stored of fresh.events) if (!known.has(String(stored.id))) take(stored)
      dirtyAll = true
      renderBudgets()
      if (fresh.children.length > 0) {
        children.hidden = false
        mount(children, h("h2", { id: "children-title" }, `Child runs (${fresh.children.length})`), await childTree(fresh.children, 0, { left: 50 }))
      }
      schedule()
      return fresh
    } catch (error) {
      mount(container, context.showError(error))
      return undefined
    }
  }

  const startStream = () => {
    stream?.close()
    const last = events.at(-1)
    live.textContent = "live"
    stream = follow(`${path}/stream`, {
      lastEventId: last === undefined ? undefined : String(last.id),
      onData: (data, id) => {
        const stored = /** @type {StoredEvent} */ (typeof data === "object" && data !== null && "event" in data ? data : { id: id ?? String(events.length), at: new Date().toISOString(), event: data })
        if (events.some((known) => String(known.id) === String(stored.id))) return
        take(stored)
        schedule()
      },
      final: (data) => isRunEnd(/** @type {{ event?: unknown }} */ (data)?.event ?? data, runId),
      onState: (state) => {
        live.textContent = state === "open" ? "live" : state === "reconnecting" ? "reconnecting…" : ""
        if (state === "ended" && !disposed) void refreshDetail()
      }
    })
  }

  mount(
    container,
    head,
    facts,
    outcome,
    h("div", { class: "columns" }, budgets, children),
    timeline,
    turnsSection,
    h(
      "section",
      { class: "card", "aria-labelledby": "raw-title" },
      h("div", { class: "page-head" }, h("h2", { id: "raw-title" }, "Raw events"), rawCount),
      h("div", { class: "raw-events" }, rawList.element, selected)
    )
  )

  void refreshDetail().then((fresh) => {
    if (fresh === undefined || disposed) return
    if (fresh.summary.status === "running") startStream()
  })
  // A suspended run that gets a decision resumes: follow it again.
  const unsubscribe = context.onChange((change) => {
    if (change.runId !== runId || disposed) return
    void refreshDetail().then((fresh) => {
      if (fresh?.summary.status === "running" && (stream === undefined || view.ended)) {
        view.ended = false
        startStream()
      }
    })
  })
  return () => {
    disposed = true
    stream?.close()
    unsubscribe()
    if (frame !== 0) cancelAnimationFrame(frame)
  }
}
