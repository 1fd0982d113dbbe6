// @ts-check
/**
 * The pieces of a run's detail: the waterfall of turns, one turn with its model call and tool calls,
 * budget bars and the child-run tree. Each takes data and returns an element; the page decides when
 * to rebuild which.
 *
 * @example
 * container.append(budgetBars({ turns: { limit: 8, used: 3 } }))
 */
import { describeError, formatCount, formatDuration, formatTime, h, statusBadge } from "../dom.js"
import { jsonView } from "../json-view.js"
import { tokensOf } from "../run-view.js"

/** @typedef {import("../run-view.js").RunView} RunView */
/** @typedef {import("../run-view.js").TurnView} TurnView */
/** @typedef {import("../run-view.js").ToolCallView} ToolCallView */
/** @typedef {import("../../api-types.ts").ModelExchange} ModelExchange */

/**
 * `<details>` whose open state survives a rebuild of its region (keyed in `openKeys`).
 * @param {Set<string>} openKeys
 * @param {string} key
 * @param {import("../dom.js").Child} summary
 * @param {() => import("../dom.js").Child} body built when first opened
 * @param {{ class?: string }} [options]
 */
export const keptDetails = (openKeys, key, summary, body, options = {}) => {
  const details = /** @type {HTMLDetailsElement} */ (h("details", { class: options.class ?? "", "data-key": key }, h("summary", {}, summary)))
  let built = false
  const build = () => {
    if (built) return
    built = true
    const content = body()
    details.append(h("div", { class: "details-body" }, content))
  }
  details.addEventListener("toggle", () => {
    if (details.open) {
      openKeys.add(key)
      build()
    } else openKeys.delete(key)
  })
  if (openKeys.has(key)) {
    details.open = true
    build()
  }
  return details
}

/**
 * Budget use against limits, one bar per dimension.
 * @param {{ readonly [dimension: string]: { readonly limit: number | null, readonly used: number } }} budgets
 */
export const budgetBars = (budgets) => {
  const entries = Object.entries(budgets ?? {})
  if (entries.length === 0) return h("p", { class: "muted" }, "No budget recorded.")
  return h(
    "ul",
    { class: "budgets" },
    entries.map(([dimension, { limit, used }]) => {
      if (limit === null) {
        return h("li", { class: "budget" }, h("span", { class: "budget-name" }, dimension), h("span", { class: "muted small" }, "unlimited"), h("span", { class: "budget-numbers" }, formatCount(used)))
      }
      const share = limit > 0 ? Math.min(1, used / limit) : 0
      const level = share >= 1 ? "over" : share >= 0.8 ? "high" : "ok"
      return h(
        "li",
        { class: "budget" },
        h("span", { class: "budget-name" }, dimension),
        h("progress", { class: `budget-bar budget-${level}`, max: String(limit > 0 ? limit : 1), value: String(Math.min(used, limit > 0 ? limit : used)), "aria-label": `${dimension}: ${used} of ${limit}` }),
        h("span", { class: "budget-numbers" }, `${formatCount(used)} / ${formatCount(limit)}`)
      )
    })
  )
}

/**
 * Budget use on one line (`maxTurns 1/4 · maxTokens 120`), for the child-run tree.
 * @param {{ readonly [dimension: string]: { readonly limit: number | null, readonly used: number } }} budgets
 */
export const budgetLine = (budgets) =>
  h("div", { class: "muted small" }, Object.entries(budgets ?? {}).map(([dimension, { limit, used }]) => `${dimension} ${formatCount(used)}${limit === null ? "" : ` / ${formatCount(limit)}`}`).join(" · "))

/**
 * The model exchange of a turn: the server's record when it has one, else what the events carried.
 * @param {TurnView} turn
 * @param {ReadonlyArray<ModelExchange>} requests
 * @returns {{ system: string | undefined, tools: ReadonlyArray<string>, messages: ReadonlyArray<unknown>, messageCount: number | undefined, response: unknown, latencyMs: number | undefined, usage: unknown, finishReason: string | undefined }}
 */
export const exchangeOf = (turn, requests) => {
  const stored = requests.find((request) => request.turn === turn.turn)
  const request = /** @type {{ messages?: unknown, tools?: unknown }} */ (turn.request ?? {})
  const messages = Array.isArray(request.messages) ? request.messages : []
  const systemMessage = messages.find((message) => message?.role === "system")
  const response = /** @type {{ finishReason?: unknown }} */ (turn.response ?? {})
  return {
    system: stored?.system ?? (typeof systemMessage?.content === "string" ? systemMessage.content : undefined),
    tools: stored?.tools ?? (Array.isArray(request.tools) ? request.tools.map((tool) => String(tool?.name ?? tool?.function?.name ?? "?")) : []),
    messages: typeof stored?.messages === "number" ? [] : stored?.messages ?? messages.filter((message) => message?.role !== "system"),
    messageCount: typeof stored?.messages === "number" ? stored.messages : undefined,
    response: stored?.response ?? turn.response,
    latencyMs: stored?.latencyMs ?? turn.durationMs,
    usage: stored?.usage ?? turn.usage,
    finishReason: stored?.finishReason ?? (typeof response.finishReason === "string" ? response.finishReason : undefined)
  }
}

const waterfallRows = 100

/**
 * The waterfall: one bar per turn on the run's time axis (model latency), tool calls after it.
 * @param {RunView} view
 * @param {ReadonlyArray<ModelExchange>} requests
 */
export const waterfall = (view, requests) => {
  const start = view.startedAt === undefined ? undefined : new Date(/** @type {string} */ (view.startedAt)).getTime()
  const times = view.turns.map((turn) => {
    const at = turn.at === undefined ? undefined : new Date(/** @type {string} */ (turn.at)).getTime()
    const model = exchangeOf(turn, requests).latencyMs ?? 0
    const tools = turn.calls.reduce((sum, call) => sum + (call.durationMs ?? 0), 0)
    return { turn, offset: start !== undefined && at !== undefined && Number.isFinite(at) ? Math.max(0, at - start) : undefined, model, tools }
  })
  let cursor = 0
  const placed = times.map((entry) => {
    // Turns run one after the other: a turn never starts before the previous one ended.
    const offset = Math.max(entry.offset ?? cursor, cursor)
    cursor = offset + entry.model + entry.tools
    return { ...entry, offset }
  })
  const total = Math.max(1, view.durationMs ?? 0, cursor)
  if (placed.length === 0) return h("p", { class: "muted" }, view.ended ? "No model call in this run (a composite's model calls are in its child runs)." : "No model call yet.")
  return h(
    "div",
    {},
    h("p", { class: "legend muted small" }, h("span", { class: "swatch model" }), " model call ", h("span", { class: "swatch tools" }), " tool calls"),
    h(
    "ol",
    { class: "waterfall", "aria-label": "Turns on the run's time axis" },
    placed.length > waterfallRows ? h("li", { class: "muted small" }, `The first ${waterfallRows} of ${placed.length.toLocaleString("en-US")} turns; every turn is listed under Turns.`) : null,
    placed.slice(0, waterfallRows).map(({ turn, offset, model, tools }) => {
      const exchange = exchangeOf(turn, requests)
      const tokens = tokensOf(exchange.usage)
      const left = (offset / total) * 100
      const modelWidth = Math.max(0.5, (model / total) * 100)
      const toolWidth = (tools / total) * 100
      return h(
        "li",
        { class: "waterfall-row" },
        h("a", { href: `#turn-${turn.turn}`, class: "waterfall-label", onclick: (/** @type {Event} */ event) => {
          event.preventDefault()
          const target = document.getElementById(`turn-${turn.turn}`)
          if (target instanceof HTMLDetailsElement) target.open = true
          target?.scrollIntoView({ block: "start" })
        } }, `Turn ${turn.turn}`),
        h(
          "span",
          { class: "waterfall-track" },
          h("span", { class: "waterfall-bar model", style: `left: ${left}%; width: ${modelWidth}%`, title: `model ${formatDuration(model)}` }),
          toolWidth > 0 ? h("span", { class: "waterfall-bar tools", style: `left: ${left + modelWidth}%; width: ${toolWidth}%`, title: `tools ${formatDuration(tools)}` }) : null
        ),
        h(
          "span",
          { class: "waterfall-facts" },
          turn.answered ? formatDuration(exchange.latencyMs) : "waiting…",
          " · ",
          tokens.total === undefined ? "— tokens" : `${formatCount(tokens.total)} tokens`,
          exchange.finishReason === undefined ? null : ` · ${exchange.finishReason}`,
          turn.calls.length === 0 ? null : ` · ${turn.calls.length} tool call${turn.calls.length === 1 ? "" : "s"}`
        )
      )
    })
    )
  )
}

const statusText = {
  streaming: "arguments streaming…",
  requested: "requested",
  ok: "ok",
  error: "error",
  invalid: "invalid arguments",
  refused: "not allowed",
  waiting: "waiting for approval",
  denied: "denied",
  handoff: "handoff"
}

/**
 * One tool call: a `<details>` whose summary names the tool and its outcome, and whose body shows the
 * arguments, the result or error, the recovery taken, repairs and the approval decision.
 * @param {ToolCallView} call
 * @param {Set<string>} openKeys
 */
export const toolCallView = (call, openKeys) =>
  keptDetails(
    openKeys,
    `call-${call.key}`,
    [
      h("span", { class: "tool-name mono" }, call.tool),
      " ",
      h("span", { class: `badge call-${call.status}` }, statusText[call.status] ?? call.status),
      call.durationMs === undefined ? null : h("span", { class: "muted" }, ` ${formatDuration(call.durationMs)}`),
      call.recovery === undefined ? null : h("span", { class: "muted" }, ` · recovery: ${call.recovery}`),
      call.repairs === undefined ? null : h("span", { class: "muted" }, " · arguments repaired"),
      call.decision === undefined ? null : h("span", { class: "muted" }, ` · ${call.decision.decision}`)
    ],
    () => [
      h("div", { class: "kv" }, h("span", {}, "Call id"), h("code", {}, call.id ?? "(streaming)")),
      h("h4", {}, "Arguments"),
      call.status === "streaming" ? h("pre", { class: "mono stream-args" }, call.argsText) : jsonView(call.args, { open: true, parseStrings: true, label: `Arguments of ${call.tool}` }),
      call.repairs === undefined ? null : [h("h4", {}, "Repairs"), jsonView(call.repairs, { open: true })],
      call.issues === undefined ? null : [h("h4", {}, "Why the arguments were refused"), h("pre", { class: "mono" }, call.issues)],
      call.allowed === undefined ? null : [h("h4", {}, "Allowed tools in this skill"), h("p", {}, call.allowed.map((name) => h("code", { class: "chip" }, name)))],
      call.waitingReason === undefined ? null : h("p", {}, "Suspended because: ", call.waitingReason),
      call.decision === undefined
        ? null
        : h(
          "div",
          { class: "decision" },
          h("h4", {}, "Decision"),
          h("p", {}, h("strong", {}, call.decision.decision), call.decision.reason === undefined ? null : ` — ${call.decision.reason}`, ` · ${formatTime(/** @type {number} */ (call.decision.at))}`)
        ),
      call.status === "ok" ? [h("h4", {}, "Result"), jsonView(call.result, { open: false, parseStrings: true, label: `Result of ${call.tool}` })] : null,
      call.status === "error" ? [h("h4", {}, "Error"), h("p", { class: "error-text" }, describeError(call.error)), jsonView(call.error)] : null
    ],
    { class: `tool-call call-${call.status}` }
  )

/**
 * A transcript as chat bubbles (role, content, tool calls); long ones collapsed by the JSON view.
 * @param {ReadonlyArray<unknown>} messages
 */
export const transcript = (messages) =>
  h(
    "ol",
    { class: "transcript" },
    messages.slice(-200).map((raw) => {
      const message = /** @type {{ role?: unknown, content?: unknown, toolCalls?: unknown, name?: unknown }} */ (raw ?? {})
      const role = typeof message.role === "string" ? message.role : "?"
      const content = typeof message.content === "string" ? message.content : message.content === undefined ? "" : JSON.stringify(message.content)
      return h(
        "li",
        { class: `message role-${role}` },
        h("span", { class: "message-role" }, role, typeof message.name === "string" ? ` · ${message.name}` : ""),
        content.length > 4000 ? jsonView(content) : h("div", { class: "message-content" }, content),
        Array.isArray(message.toolCalls) && message.toolCalls.length > 0
          ? h("div", { class: "message-calls" }, message.toolCalls.map((raw) => {
            const call = /** @type {{ name?: unknown, arguments?: unknown }} */ (raw ?? {})
            const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) ?? ""
            return h("code", { class: "chip", title: args.slice(0, 2000) }, `${String(call.name ?? "?")}(${args.length > 120 ? `${args.slice(0, 120)}…` : args})`)
          }))
          : null
      )
    }),
    messages.length > 200 ? h("li", { class: "muted" }, `… ${messages.length - 200} earlier messages not shown (see raw events)`) : null
  )

/**
 * One turn: the model call (latency, tokens, finish reason, request, raw answer), the streamed text
 * and reasoning, and its tool calls.
 * @param {TurnView} turn
 * @param {ReadonlyArray<ModelExchange>} requests
 * @param {Set<string>} openKeys
 * @param {boolean} live the turn is still streaming
 */
export const turnView = (turn, requests, openKeys, live) => {
  const exchange = exchangeOf(turn, requests)
  const tokens = tokensOf(exchange.usage)
  const section = keptDetails(
    openKeys,
    `turn-${turn.turn}`,
    [
      h("strong", {}, turn.turn === 0 ? "Skill routing" : `Turn ${turn.turn}`),
      turn.skill === undefined ? null : h("span", { class: "muted" }, ` · skill ${turn.skill}`),
      h("span", { class: "muted" }, ` · ${turn.answered ? formatDuration(exchange.latencyMs) : live ? "streaming…" : "no answer"}`),
      tokens.total === undefined ? null : h("span", { class: "muted" }, ` · ${formatCount(tokens.input)} in / ${formatCount(tokens.output)} out`),
      exchange.finishReason === undefined ? null : h("span", { class: "muted" }, ` · ${exchange.finishReason}`),
      turn.calls.length === 0 ? null : h("span", { class: "muted" }, ` · ${turn.calls.map((call) => call.tool).join(", ")}`)
    ],
    () => [
      turn.reasoning === "" ? null : [h("h4", {}, "Reasoning"), h("div", { class: "reasoning" }, turn.reasoning)],
      turn.text === "" ? null : [h("h4", {}, "Text"), h("div", { class: "answer-text" }, turn.text)],
      turn.retries.length === 0 ? null : [h("h4", {}, `Retries (${turn.retries.length})`), jsonView(turn.retries)],
      turn.calls.length === 0 ? null : [h("h4", {}, "Tool calls"), h("div", { class: "tool-calls" }, turn.calls.map((call) => toolCallView(call, openKeys)))],
      keptDetails(
        openKeys,
        `request-${turn.turn}`,
        "Request the model saw",
        () => [
          h("h4", {}, "System prompt"),
          exchange.system === undefined ? h("p", { class: "muted" }, "(none)") : h("pre", { class: "system-prompt" }, exchange.system),
          h("h4", {}, `Offered tools (${exchange.tools.length}) — the allowlist of this turn`),
          h("p", { class: "offered-tools" }, exchange.tools.length === 0 ? h("span", { class: "muted" }, "none") : exchange.tools.map((name) => h("code", { class: "chip" }, name))),
          h("h4", {}, `Transcript (${exchange.messageCount ?? exchange.messages.length} message${(exchange.messageCount ?? exchange.messages.length) === 1 ? "" : "s"})`),
          exchange.messageCount === undefined ? transcript(exchange.messages) : h("p", { class: "muted" }, "Only the message count was recorded (a trace file).")
        ],
        { class: "sub" }
      ),
      keptDetails(openKeys, `response-${turn.turn}`, "Raw answer", () => jsonView(exchange.response, { open: true }), { class: "sub" })
    ],
    { class: "turn" }
  )
  section.id = `turn-${turn.turn}`
  if (live && !openKeys.has(`turn-${turn.turn}`)) {
    section.open = true
    openKeys.add(`turn-${turn.turn}`)
  }
  return section
}

/**
 * @param {import("../../api-types.ts").RunSummary} summary
 */
export const summaryFacts = (summary) =>
  h(
    "dl",
    { class: "facts" },
    [
      ["Status", statusBadge(summary.status)],
      ["Agent", summary.agent],
      ["Source", summary.source],
      ["Started", formatTime(summary.startedAt)],
      ["Duration", formatDuration(summary.durationMs)],
      ["Turns", formatCount(summary.turns)],
      ["Tokens", `${formatCount(summary.tokens?.input)} in · ${formatCount(summary.tokens?.output)} out · ${formatCount(summary.tokens?.total)} total`]
    ].map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value)))
  )
