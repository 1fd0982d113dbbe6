// @ts-check
/**
 * Approvals inbox: every run waiting for a human decision, with each pending call's tool, reason
 * and arguments. Per call: approve, deny (with a reason the model will see), or edit the arguments
 * in a form generated from the tool's JSON Schema and validated here before anything is sent. The
 * server checks again with the tool's own Schema (a 400 is shown next to the run). Decisions sent
 * from this browser are listed with who sent them and when; the run's detail shows them as events.
 *
 * @example
 * // routed at #/approvals
 */
import { api } from "../api.js"
import { formatTime, h, mount, pathPart } from "../dom.js"
import { jsonView } from "../json-view.js"
import { schemaForm } from "../schema-form.js"

/** @typedef {import("../../api-types.ts").PendingApproval} PendingApproval */
/** @typedef {import("../../api-types.ts").PendingCall} PendingCall */
/** @typedef {import("../../api-types.ts").Decision} Decision */
/** @typedef {{ runId: string, agent: string, decidedBy: string, at: string, decisions: ReadonlyArray<{ callId: string, tool: string, decision: string, reason?: string | undefined }> }} DecisionRecord */

const nameKey = "effect-agent-studio-decided-by"
const logKey = "effect-agent-studio-decisions"

/** @returns {DecisionRecord[]} */
const readLog = () => {
  try {
    const parsed = JSON.parse(localStorage.getItem(logKey) ?? "[]")
    return Array.isArray(parsed) ? parsed : []
  } catch {
    return []
  }
}
/** @param {DecisionRecord} record */
const addToLog = (record) => {
  try {
    localStorage.setItem(logKey, JSON.stringify([record, ...readLog()].slice(0, 100)))
  } catch {
    // storage full or refused: the log is a convenience
  }
}

/**
 * The readable lines of a refusal's details (`message`, `reason`, `issues` strings, however nested).
 * @param {unknown} details
 * @returns {string[]}
 */
export const refusalLines = (details) => {
  /** @type {string[]} */
  const lines = []
  /**
   * @param {unknown} value
   * @param {number} depth
   */
  const visit = (value, depth) => {
    if (depth > 4 || lines.length >= 10 || typeof value !== "object" || value === null) return
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === "string" && ["message", "reason", "issues", "error"].includes(key) && !lines.includes(item)) lines.push(item)
      else visit(item, depth + 1)
    }
  }
  if (typeof details === "string") return [details]
  visit(details, 0)
  return lines
}

/**
 * The decision controls of one call; `read()` gives its decision or why it cannot be sent yet.
 * @param {PendingApproval} approval
 * @param {PendingCall} call
 * @param {number} index
 */
const callDecision = (approval, call, index) => {
  const id = `d-${approval.runId}-${index}`.replace(/[^A-Za-z0-9_-]/g, "_")
  /** @type {"approve" | "deny" | "edit" | undefined} */
  let choice
  const extra = h("div", { class: "decision-extra" })
  const reason = /** @type {HTMLInputElement} */ (h("input", { id: `${id}-reason`, type: "text", placeholder: "told to the model" }))
  /** @type {ReturnType<typeof schemaForm> | undefined} */
  let form
  const problem = h("div", { class: "field-error", role: "alert" })
  /** @param {"approve" | "deny" | "edit"} value */
  const choose = (value) => {
    choice = value
    problem.textContent = ""
    if (value === "deny") {
      mount(extra, h("label", { for: `${id}-reason` }, "Reason for denying"), reason)
      reason.focus()
    } else if (value === "edit") {
      form = schemaForm(call.jsonSchema ?? {}, call.arguments, { idPrefix: `${id}-edit` })
      mount(extra, h("p", { class: "muted" }, call.jsonSchema === undefined ? "No schema was sent for this tool: the server will validate." : "Checked against the tool's schema before sending."), form.element)
      form.focus()
    } else mount(extra)
  }
  const options = /** @type {const} */ (["approve", "deny", "edit"]).map((value) =>
    h(
      "label",
      { class: `choice choice-${value}` },
      h("input", { type: "radio", name: id, value, onchange: () => choose(value) }),
      value === "approve" ? "Approve" : value === "deny" ? "Deny" : "Edit arguments"
    ))
  const element = h(
    "div",
    { class: "pending-call" },
    h("div", { class: "call-head" }, h("code", { class: "tool-name" }, call.tool), h("span", { class: "mono muted" }, ` ${call.callId}`)),
    call.reason === undefined ? null : h("p", {}, "Why: ", call.reason),
    h("h4", {}, "Arguments"),
    jsonView(call.arguments, { open: true, parseStrings: true, label: `Arguments of ${call.tool}` }),
    h("fieldset", { class: "choices" }, h("legend", {}, `Decision for ${call.tool}`), options),
    extra,
    problem
  )
  /** @returns {{ ok: true, decision: Decision } | { ok: false }} */
  const read = () => {
    if (choice === undefined) {
      problem.textContent = "Choose approve, deny or edit."
      return { ok: false }
    }
    if (choice === "approve") return { ok: true, decision: { callId: call.callId, decision: "approve" } }
    if (choice === "deny") return { ok: true, decision: reason.value.trim() === "" ? { callId: call.callId, decision: "deny" } : { callId: call.callId, decision: "deny", reason: reason.value.trim() } }
    const result = form?.read()
    if (result === undefined || !result.ok) return { ok: false }
    return { ok: true, decision: { callId: call.callId, decision: "edit", arguments: result.value } }
  }
  return { element, read, choose, tool: call.tool }
}

/**
 * What one card decides: the run and the calls it waits for. A run that waits again after a decision
 * (its next tool call) keeps its run id but waits for other calls: a new card, not the decided one.
 * @param {PendingApproval} approval
 */
const waitKey = (approval) => JSON.stringify([approval.runId, approval.calls.map((call) => call.callId)])

/**
 * @param {PendingApproval} approval
 * @param {HTMLInputElement} decidedBy
 * @param {() => void} done
 */
const approvalCard = (approval, decidedBy, done) => {
  const calls = approval.calls.map((call, index) => callDecision(approval, call, index))
  const status = h("div", { role: "status" })
  const send = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "primary" }, "Send decisions"))
  // One decision per wait: a second click (a double click, Approve then Send) while the first is on
  // its way, or after it was taken, sends nothing; the server would refuse it as not waiting.
  /** @type {"open" | "sending" | "sent"} */
  let state = "open"
  const submit = async () => {
    if (state !== "open") return
    const read = calls.map((call) => call.read())
    if (read.some((result) => !result.ok)) {
      status.textContent = "Not sent: fix the decisions marked above."
      return
    }
    const decisions = read.map((result) => /** @type {{ ok: true, decision: Decision }} */ (result).decision)
    state = "sending"
    send.disabled = true
    approveAll.disabled = true
    status.textContent = "Sending…"
    try {
      const who = decidedBy.value.trim()
      await api.post(`/api/approvals/${pathPart(approval.runId)}`, { decisions, ...(who === "" ? {} : { decidedBy: who }) })
      addToLog({
        runId: approval.runId,
        agent: approval.agent,
        decidedBy: who === "" ? "(anonymous)" : who,
        at: new Date().toISOString(),
        decisions: decisions.map((decision, index) => ({ callId: decision.callId, tool: calls[index]?.tool ?? "?", decision: decision.decision, reason: "reason" in decision ? decision.reason : undefined }))
      })
      state = "sent"
      status.textContent = "Sent: the run resumes."
      done()
    } catch (error) {
      state = "open"
      send.disabled = false
      approveAll.disabled = false
      const details = /** @type {{ details?: unknown }} */ (error).details
      const lines = refusalLines(details)
      mount(status, h(
        "div",
        { class: "error-box", role: "alert" },
        h("strong", {}, "Refused by the server: "),
        error instanceof Error ? error.message : String(error),
        lines.length === 0 ? null : h("ul", {}, lines.map((line) => h("li", {}, line))),
        details === undefined ? null : jsonView(details, { label: "details of the refusal" })
      ))
    }
  }
  send.addEventListener("click", () => void submit())
  const approveAll = /** @type {HTMLButtonElement} */ (h("button", { type: "button", onclick: () => {
    if (state !== "open") return
    for (const call of calls) call.choose("approve")
    for (const radio of card.querySelectorAll('input[type="radio"][value="approve"]')) /** @type {HTMLInputElement} */ (radio).checked = true
    void submit()
  } }, calls.length === 1 ? "Approve" : "Approve all"))
  const card = h(
    "article",
    { class: "card approval", "data-run-id": approval.runId, "data-wait": waitKey(approval), "aria-label": `Approval for ${approval.agent}` },
    h("div", { class: "page-head" }, h("h2", {}, approval.agent), h("a", { href: `#/runs/${pathPart(approval.runId)}`, class: "mono" }, approval.runId.slice(0, 12)), h("span", { class: "muted" }, `${approval.source} · waiting since ${formatTime(approval.since)}`)),
    calls.map((call) => call.element),
    h("div", { class: "actions" }, approveAll, send),
    status
  )
  return card
}

/** @type {import("../app.js").Page} */
export const approvalsPage = (container, _params, context) => {
  const decidedBy = /** @type {HTMLInputElement} */ (h("input", { id: "decided-by", type: "text", autocomplete: "name", value: localStorage.getItem(nameKey) ?? "" }))
  decidedBy.addEventListener("change", () => localStorage.setItem(nameKey, decidedBy.value.trim()))
  const list = h("div", { class: "approvals" })
  const log = h("section", { class: "card", "aria-labelledby": "log-title" })
  const renderLog = () => {
    const records = readLog()
    mount(
      log,
      h("h2", { id: "log-title" }, "Decided from this browser"),
      records.length === 0
        ? h("p", { class: "muted" }, "Nothing yet.")
        : h("ul", { class: "decision-log" }, records.slice(0, 30).map((record) =>
          h(
            "li",
            {},
            h("strong", {}, record.decidedBy),
            ` · ${formatTime(record.at)} · `,
            h("a", { href: `#/runs/${pathPart(record.runId)}` }, record.agent),
            ": ",
            record.decisions.map((decision) => `${decision.decision} ${decision.tool}${decision.reason === undefined ? "" : ` (${decision.reason})`}`).join(", ")
          )))
    )
  }

  const load = async () => {
    try {
      const approvals = /** @type {PendingApproval[]} */ (await api.get("/api/approvals"))
      const waits = new Set(approvals.map(waitKey))
      // Keep cards someone is filling in; add new ones, drop decided ones (a run waiting again for
      // other calls gets a new card: the old one's calls are decided).
      /** @type {Set<string>} */
      const shown = new Set()
      for (const card of [...list.querySelectorAll("article.approval")]) {
        const key = card.getAttribute("data-wait") ?? ""
        if (waits.has(key)) shown.add(key)
        else card.remove()
      }
      for (const approval of approvals) {
        if (shown.has(waitKey(approval))) continue
        list.append(approvalCard(approval, decidedBy, () => {
          renderLog()
          context.refreshApprovalCount()
          setTimeout(() => void load(), 300)
        }))
      }
      const empty = list.querySelector(".empty")
      if (approvals.length === 0 && empty === null) list.append(h("p", { class: "empty" }, "No run is waiting for a decision."))
      if (approvals.length > 0) empty?.remove()
    } catch (error) {
      mount(list, context.showError(error))
    }
  }

  mount(
    container,
    h("div", { class: "page-head" }, h("h1", {}, "Approvals"), h("div", { class: "inline-field" }, h("label", { for: "decided-by" }, "Deciding as"), decidedBy)),
    list,
    log
  )
  renderLog()
  void load()
  return context.onChange((change) => {
    if (change.type === "approval") void load()
  })
}
