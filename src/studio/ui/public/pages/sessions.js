// @ts-check
/**
 * Sessions: the conversations of the configured session store, newest first; one opens as its
 * transcript (and the pending calls, when the session waits for a decision).
 *
 * @example
 * // routed at #/sessions and #/sessions/<id>
 */
import { api } from "../api.js"
import { formatCount, formatTime, h, mount, pathPart } from "../dom.js"
import { jsonView } from "../json-view.js"
import { virtualList } from "../virtual-list.js"
import { transcript } from "./run-view-parts.js"

/** @typedef {import("../../api-types.ts").SessionSummary} SessionSummary */
/** @typedef {import("../../api-types.ts").SessionDetail} SessionDetail */

/** @type {import("../app.js").Page} */
export const sessionsPage = (container, params, context) => {
  const selectedId = params[0] ?? ""
  /** @type {SessionSummary[]} */
  let sessions = []
  const list = virtualList({
    rowHeight: 44,
    label: "Sessions",
    height: "calc(100vh - 12rem)",
    renderRow: (index) => {
      const session = /** @type {SessionSummary} */ (sessions[index])
      return h(
        "a",
        { class: `session-row${session.id === selectedId ? " selected" : ""}`, href: `#/sessions/${pathPart(session.id)}`, ...(session.id === selectedId ? { "aria-current": "true" } : {}) },
        h("span", { class: "mono" }, session.id),
        h("span", { class: "muted" }, `${formatCount(session.messages)} messages · ${formatTime(session.updatedAt)}`),
        session.waiting ? h("span", { class: "badge status-suspended" }, "waiting") : null
      )
    }
  })
  const pane = h("div", { class: "session-pane" }, h("p", { class: "muted" }, "Choose a session."))
  const count = h("span", { class: "muted" })
  mount(container, h("div", { class: "page-head" }, h("h1", {}, "Sessions"), count), h("div", { class: "split" }, list.element, pane))

  void api.get("/api/sessions").then(
    (result) => {
      sessions = Array.isArray(result) ? /** @type {SessionSummary[]} */ (result) : []
      count.textContent = `${sessions.length} session${sessions.length === 1 ? "" : "s"}`
      list.setCount(sessions.length)
      if (sessions.length === 0) mount(pane, h("p", { class: "empty" }, "No sessions: the studio shows a session store's conversations when one is configured."))
    },
    (error) => mount(container, context.showError(error))
  )
  if (selectedId !== "") {
    void api.get(`/api/sessions/${pathPart(selectedId)}`).then(
      (result) => {
        const session = /** @type {SessionDetail} */ (result)
        mount(
          pane,
          h("h2", {}, "Session ", h("span", { class: "mono" }, session.id)),
          session.waiting === undefined || session.waiting === null ? null : h("div", { class: "notice" }, h("h3", {}, "Waiting for a decision"), jsonView(session.waiting, { open: true })),
          transcript(session.messages)
        )
      },
      (error) => mount(pane, context.showError(error))
    )
  }
}
