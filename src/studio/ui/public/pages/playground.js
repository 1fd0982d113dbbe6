// @ts-check
/**
 * Playground: the agents and composites the studio's module exports, each with its model, budgets,
 * skills (and the tools each allows) and tools (JSON Schema, effect class, approval policy). Send an
 * input (a text box, or a form generated from the agent's input schema), watch the run stream in live
 * — text, reasoning, tool calls as they happen — and stop it.
 *
 * @example
 * // routed at #/playground and #/playground/<agentId>
 */
import { api, follow } from "../api.js"
import { describeError, formatDuration, h, mount, pathPart, statusBadge } from "../dom.js"
import { jsonView } from "../json-view.js"
import { applyEvent, emptyRunView, isRunEnd } from "../run-view.js"
import { schemaForm } from "../schema-form.js"
import { toolCallView } from "./run-view-parts.js"

/** @typedef {import("../../api-types.ts").AgentInfo} AgentInfo */
/** @typedef {import("../../api-types.ts").StoredEvent} StoredEvent */

/** @param {unknown} approval */
const approvalText = (approval) => {
  if (approval === undefined || approval === null || approval === false || approval === "never") return "no approval"
  if (approval === true || approval === "always") return "always needs approval"
  if (approval === "conditional") return "when its predicate says so"
  if (typeof approval === "string") return approval
  return JSON.stringify(approval)
}

/** @param {AgentInfo} agent */
const agentDescription = (agent) => {
  const allowedBy = new Map()
  for (const skill of agent.skills) for (const tool of skill.tools) allowedBy.set(tool, [...(allowedBy.get(tool) ?? []), skill.name])
  return h(
    "div",
    { class: "agent-info" },
    h("div", { class: "page-head" }, h("h1", {}, agent.name), h("span", { class: "badge" }, agent.kind), agent.model === undefined ? null : h("span", { class: "muted" }, `model: ${agent.model}`)),
    agent.description === undefined ? null : h("p", {}, agent.description),
    h(
      "div",
      { class: "columns" },
      h("section", { class: "card", "aria-labelledby": "skills-title" }, h("h2", { id: "skills-title" }, `Skills (${agent.skills.length})`),
        agent.skills.length === 0
          ? h("p", { class: "muted" }, "One implicit skill: every tool.")
          : h("ul", { class: "skills" }, agent.skills.map((skill) =>
            h("li", {}, h("strong", {}, skill.name), skill.description === undefined ? null : h("span", { class: "muted" }, ` — ${skill.description}`), h("div", {}, skill.tools.length === 0 ? h("span", { class: "muted" }, "deterministic (no tools)") : skill.tools.map((tool) => h("code", { class: "chip" }, tool))))))),
      h("section", { class: "card", "aria-labelledby": "budgets-title" }, h("h2", { id: "budgets-title" }, "Budgets"),
        agent.budgets === undefined || Object.keys(agent.budgets).length === 0
          ? h("p", { class: "muted" }, "Defaults (8 turns).")
          : h("dl", { class: "facts" }, Object.entries(agent.budgets).map(([key, value]) => h("div", {}, h("dt", {}, key), h("dd", {}, value === null ? "unlimited" : typeof value === "object" ? JSON.stringify(value) : String(value))))))
    ),
    h("section", { class: "card", "aria-labelledby": "tools-title" }, h("h2", { id: "tools-title" }, `Tools (${agent.tools.length})`),
      agent.tools.length === 0
        ? h("p", { class: "muted" }, "No tools.")
        : h("table", { class: "tools-table" },
          h("thead", {}, h("tr", {}, ["Tool", "Effect", "Approval", "Allowed in", "Arguments"].map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", {}, agent.tools.map((tool) =>
            h("tr", {},
              h("th", { scope: "row" }, h("code", {}, tool.name), tool.description === undefined ? null : h("div", { class: "muted small" }, tool.description)),
              h("td", {}, h("span", { class: `badge effect-${tool.effect}` }, tool.effect)),
              h("td", {}, approvalText(tool.approval)),
              h("td", {}, (allowedBy.get(tool.name) ?? []).join(", ") || h("span", { class: "muted" }, agent.skills.length === 0 ? "all" : "none")),
              h("td", {}, jsonView(tool.jsonSchema, { label: `JSON Schema of ${tool.name}` }))))))))
}

/**
 * The live view of a playground run: text and reasoning as they stream, tool calls as they happen.
 * A run that suspends is followed again when a decision resumes it (under the same id).
 * @param {string} runId
 * @param {import("../app.js").PageContext} context
 */
const liveRun = (runId, context) => {
  const showError = context.showError
  let view = emptyRunView()
  /** @type {Set<string>} */
  const openKeys = new Set()
  const status = h("span", {}, statusBadge("running"))
  const body = h("div", { class: "live-body", "aria-live": "polite", "aria-busy": "true" })
  const problem = h("div")
  const stop = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "danger", onclick: async () => {
    stop.disabled = true
    try {
      await api.post(`/api/runs/${pathPart(runId)}/stop`)
    } catch (error) {
      mount(problem, showError(error))
      stop.disabled = false
    }
  } }, "Stop"))
  let frame = 0
  const render = () => {
    frame = 0
    const turns = view.turns.slice(-20)
    mount(
      body,
      view.skill === undefined ? null : h("p", { class: "muted" }, `skill ${view.skill}${view.skillHow === undefined ? "" : ` (${view.skillHow})`}`),
      view.turns.length > 20 ? h("p", { class: "muted" }, `… ${view.turns.length - 20} earlier turns in the run's detail`) : null,
      turns.map((turn) =>
        h(
          "div",
          { class: "live-turn" },
          h("div", { class: "muted small" }, `Turn ${turn.turn}${turn.answered ? ` · ${formatDuration(turn.durationMs)}` : " · streaming…"}`),
          turn.reasoning === "" ? null : h("div", { class: "reasoning" }, turn.reasoning),
          turn.text === "" ? null : h("div", { class: "answer-text" }, turn.text),
          turn.calls.map((call) => toolCallView(call, openKeys))
        )),
      view.outcome === "Success" ? h("div", { class: "io" }, h("h3", {}, "Output"), typeof view.output === "string" ? h("div", { class: "answer-text output" }, view.output) : jsonView(view.output, { open: true })) : null,
      view.outcome === "Failure" ? h("div", { class: "error-box", role: "alert" }, h("strong", {}, "Failed: "), describeError(view.error)) : null,
      view.outcome === "Suspended" ? h("div", { class: "notice" }, "Waiting for a decision: ", h("a", { href: "#/approvals" }, "open the approvals inbox")) : null,
      view.outcome === "Interrupted" ? h("div", { class: "notice" }, "Stopped.") : null
    )
    stop.hidden = view.ended
    if (!view.ended) {
      mount(status, statusBadge("running"))
      body.setAttribute("aria-busy", "true")
    } else {
      const text = view.outcome === "Success" ? "completed" : view.outcome === "Suspended" ? "suspended" : view.outcome === "Interrupted" ? "cancelled" : "failed"
      mount(status, statusBadge(text))
      body.setAttribute("aria-busy", "false")
    }
  }
  let lastId = /** @type {string | undefined} */ (undefined)
  const open = () => follow(`/api/runs/${pathPart(runId)}/stream`, {
    lastEventId: lastId,
    onData: (data, id) => {
      if (id !== undefined) lastId = id
      const stored = /** @type {StoredEvent} */ (data)
      view = applyEvent(view, typeof stored === "object" && stored !== null && "event" in stored ? stored.event : stored, stored.at)
      if (frame === 0) frame = requestAnimationFrame(render)
    },
    final: (data) => isRunEnd(/** @type {{ event?: unknown }} */ (data)?.event ?? data, runId)
  })
  let stream = open()
  const unsubscribe = context.onChange((change) => {
    if (change.runId !== runId || !view.ended || view.outcome !== "Suspended") return
    stream.close()
    stream = open()
  })
  const element = h(
    "section",
    { class: "card live-run", "aria-labelledby": "live-title", "data-run-id": runId },
    h("div", { class: "page-head" }, h("h2", { id: "live-title" }, "Run"), status, h("a", { href: `#/runs/${pathPart(runId)}`, class: "mono" }, `${runId.slice(0, 12)} → details`), stop),
    problem,
    body
  )
  return {
    element,
    close: () => {
      stream.close()
      unsubscribe()
    }
  }
}

/** @type {import("../app.js").Page} */
export const playgroundPage = (container, params, context) => {
  const selectedId = params[0] ?? ""
  const side = h("nav", { class: "agent-list", "aria-label": "Agents" })
  const pane = h("div", { class: "agent-pane" })
  mount(container, h("div", { class: "split playground" }, side, pane))
  /** @type {{ close: () => void } | undefined} */
  let current

  /** @param {AgentInfo} agent */
  const showAgent = (agent) => {
    const schema = agent.inputJsonSchema
    const textInput = typeof schema !== "object" || schema === null || /** @type {{ type?: unknown }} */ (schema).type === "string" || Object.keys(schema).length === 0
    const text = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "run-input", rows: 4, placeholder: "Ask the agent something…" }))
    const form = textInput ? undefined : schemaForm(schema, undefined, { idPrefix: "input", onSubmit: () => void start() })
    const output = h("div", { class: "live-slot" })
    const problem = h("div")
    const runButton = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "primary" }, "Run"))
    const start = async () => {
      /** @type {unknown} */
      let input = text.value
      if (form !== undefined) {
        const result = form.read()
        if (!result.ok) return
        input = result.value
      }
      runButton.disabled = true
      mount(problem)
      try {
        const { runId } = /** @type {{ runId: string }} */ (await api.post(`/api/agents/${pathPart(agent.id)}/runs`, { input }))
        current?.close()
        const live = liveRun(runId, context)
        current = live
        mount(output, live.element)
      } catch (error) {
        mount(problem, context.showError(error))
      } finally {
        runButton.disabled = false
      }
    }
    text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault()
        void start()
      }
    })
    mount(
      pane,
      agentDescription(agent),
      h(
        "form",
        { class: "card run-form", "aria-labelledby": "input-title", onsubmit: (/** @type {Event} */ event) => {
          event.preventDefault()
          void start()
        } },
        h("h2", { id: "input-title" }, "Input"),
        form === undefined ? [h("label", { for: "run-input", class: "visually-hidden" }, "Input text"), text] : form.element,
        h("div", { class: "actions" }, runButton, h("span", { class: "muted small" }, "Ctrl+Enter runs")),
        problem
      ),
      output
    )
  }

  void api.get("/api/agents").then(
    (result) => {
      const agents = Array.isArray(result) ? /** @type {AgentInfo[]} */ (result) : []
      if (agents.length === 0) {
        mount(pane, h("p", { class: "empty" }, "The module exports no agents."))
        return
      }
      const selected = agents.find((agent) => agent.id === selectedId) ?? agents[0]
      mount(
        side,
        h("h2", {}, "Agents"),
        h("ul", {}, agents.map((agent) =>
          h("li", {}, h("a", { href: `#/playground/${pathPart(agent.id)}`, ...(agent === selected ? { "aria-current": "page" } : {}) }, h("strong", {}, agent.name), h("span", { class: "muted small" }, ` ${agent.kind}`)))))
      )
      if (selected !== undefined) showAgent(selected)
    },
    (error) => mount(pane, context.showError(error))
  )
  return () => current?.close()
}
