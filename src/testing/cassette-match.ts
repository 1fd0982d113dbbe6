/**
 * When a replayed request matches a recorded one, and what changed when it does not. Requests are
 * compared after a normalisation chosen by the matching rule:
 * - `"exact"` (default): messages, tools, tool choice, temperature and response format, all equal;
 * - `"ignore-volatile"`: the same, except what differs between two runs of an unchanged agent against a
 *   live provider: tool-call ids (renumbered in order of appearance, so a result still has to answer the
 *   same call), reasoning blocks and their signatures, and the temperature;
 * - a function of the request returning what must be equal (say, only the last user message).
 */
import * as Data from "effect/Data"
import type { LlmMessage, ModelRequest } from "../model/messages.ts"
import { canonical } from "./cassette-format.ts"

/** How requests are compared (see the module comment). */
export type MatchRule = "exact" | "ignore-volatile" | ((request: ModelRequest) => unknown)

/**
 * A replayed request that no recorded interaction answers; `changes` lists what differs from the
 * recorded request expected next (system prompt, tools offered, messages, settings).
 *
 * @example
 * ```ts
 * // the ModelError of a run that no longer matches has this as its cause:
 * if (error.cause instanceof CassetteMismatch) console.log(error.cause.changes.join("\n"))
 * ```
 */
export class CassetteMismatch extends Data.TaggedError("CassetteMismatch")<{
  readonly cassette: string
  /** 1-based number of the call that found no answer. */
  readonly call: number
  readonly changes: ReadonlyArray<string>
}> {
  override get message(): string {
    return `request ${this.call} does not match cassette ${this.cassette}:\n  ${this.changes.join("\n  ")}`
  }
}

const requestFields = (request: ModelRequest) => ({
  messages: request.messages,
  tools: request.tools,
  toolChoice: request.toolChoice,
  temperature: request.temperature,
  responseFormat: request.responseFormat
})

const withoutVolatile = (request: ModelRequest): ModelRequest => {
  const ids = new Map<string, string>()
  const id = (raw: string) => {
    let renamed = ids.get(raw)
    if (renamed === undefined) ids.set(raw, (renamed = `#${ids.size + 1}`))
    return renamed
  }
  const messages = request.messages.map((m): LlmMessage => {
    if (m.role === "assistant") {
      const { reasoning: _reasoning, toolCalls, ...rest } = m
      return toolCalls === undefined ? rest : { ...rest, toolCalls: toolCalls.map((c) => ({ ...c, id: id(c.id) })) }
    }
    if (m.role === "tool") return { ...m, toolCallId: id(m.toolCallId) }
    return m
  })
  const { temperature: _temperature, ...rest } = request
  return { ...rest, messages }
}

/**
 * Internal: what a rule compares, the canonical JSON text of the normalised request.
 *
 * @example
 * ```ts
 * matchKey("ignore-volatile", recorded) === matchKey("ignore-volatile", live) // they match
 * ```
 */
export const matchKey = (rule: MatchRule, request: ModelRequest): string => {
  const normalized = typeof rule === "function"
    ? rule(request)
    : requestFields(rule === "ignore-volatile" ? withoutVolatile(request) : request)
  return JSON.stringify(canonical(normalized)) ?? "undefined"
}

const clip = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text)
const show = (value: unknown) => clip(JSON.stringify(canonical(value)) ?? "undefined")

/** `line N: "old" → "new"` for the first line that differs between two texts. */
const firstChangedLine = (a: string, b: string): string => {
  const linesA = a.split("\n")
  const linesB = b.split("\n")
  let i = 0
  while (i < linesA.length && i < linesB.length && linesA[i] === linesB[i]) i++
  const line = (l: string | undefined) => (l === undefined ? "(none)" : clip(JSON.stringify(l)))
  return `line ${i + 1}: ${line(linesA[i])} → ${line(linesB[i])}`
}

const messageText = (m: LlmMessage | undefined): string => {
  if (m === undefined) return "(none)"
  if (m.role === "tool") return `tool ${m.name}: ${clip(JSON.stringify(m.content))}`
  if (m.role === "assistant" && m.toolCalls !== undefined && m.toolCalls.length > 0) {
    return `assistant calls ${m.toolCalls.map((c) => `${c.name}(${clip(c.arguments, 60)})`).join(", ")}${m.content === "" ? "" : ` with ${clip(JSON.stringify(m.content))}`}`
  }
  return `${m.role}: ${clip(JSON.stringify(m.content))}`
}

/**
 * Internal: of the recorded requests not used yet, the one a mismatch is best described against: the
 * one sharing the most leading messages (system prompt aside) with `actual`, then the fewest changes,
 * then the earliest. A changed prompt is then reported against the same case's recording, not the
 * next case's. A rule given as a function cannot say what is close: the first one.
 *
 * @example
 * ```ts
 * closestRecorded("exact", unusedRequests, live) // the recording `live` most likely meant to match
 * ```
 */
export const closestRecorded = (rule: MatchRule, recorded: ReadonlyArray<ModelRequest>, actual: ModelRequest): ModelRequest | undefined => {
  if (typeof rule === "function" || recorded.length <= 1) return recorded[0]
  const normalize = (r: ModelRequest) => (rule === "ignore-volatile" ? withoutVolatile(r) : r)
  const conversation = (r: ModelRequest) => normalize(r).messages.filter((m) => m.role !== "system").map((m) => JSON.stringify(canonical(m)))
  const live = conversation(actual)
  const shared = (r: ModelRequest) => {
    const messages = conversation(r)
    let n = 0
    while (n < messages.length && n < live.length && messages[n] === live[n]) n++
    return n
  }
  let best: ModelRequest | undefined
  let bestShared = -1
  let bestChanges = Number.POSITIVE_INFINITY
  for (const candidate of recorded) {
    const n = shared(candidate)
    if (n < bestShared) continue
    const changes = describeChanges(rule, candidate, actual).length
    if (n > bestShared || changes < bestChanges) {
      best = candidate
      bestShared = n
      bestChanges = changes
    }
  }
  return best
}

/**
 * What changed from `recorded` to `actual`, in words, under `rule` (empty when they match). A rule
 * given as a function is reported as one line with both normalised values.
 *
 * @example
 * ```ts
 * describeChanges("exact", recorded, actual) // ['system prompt: "Be brief." → "Be terse."']
 * ```
 */
export const describeChanges = (rule: MatchRule, recorded: ModelRequest, actual: ModelRequest): ReadonlyArray<string> => {
  if (matchKey(rule, recorded) === matchKey(rule, actual)) return []
  if (typeof rule === "function") return [`matched value: ${show(rule(recorded))} → ${show(rule(actual))}`]
  const a = rule === "ignore-volatile" ? withoutVolatile(recorded) : recorded
  const b = rule === "ignore-volatile" ? withoutVolatile(actual) : actual
  const changes: Array<string> = []
  const system = (r: ModelRequest) => r.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n")
  if (system(a) !== system(b)) changes.push(`system prompt ${firstChangedLine(system(a), system(b))}`)
  const toolsA = new Map(a.tools.map((t) => [t.name, t]))
  const toolsB = new Map(b.tools.map((t) => [t.name, t]))
  const added = [...toolsB.keys()].filter((n) => !toolsA.has(n))
  const removed = [...toolsA.keys()].filter((n) => !toolsB.has(n))
  if (added.length > 0) changes.push(`tools added: ${added.join(", ")}`)
  if (removed.length > 0) changes.push(`tools removed: ${removed.join(", ")}`)
  for (const [name, tool] of toolsA) {
    const other = toolsB.get(name)
    if (other === undefined) continue
    if (tool.description !== other.description) changes.push(`tool ${name} description: ${show(tool.description)} → ${show(other.description)}`)
    if (show(tool.parameters) !== show(other.parameters) || tool.strict !== other.strict) changes.push(`tool ${name} parameters: ${show(tool.parameters)} → ${show(other.parameters)}`)
  }
  if (added.length === 0 && removed.length === 0 && a.tools.map((t) => t.name).join() !== b.tools.map((t) => t.name).join()) {
    changes.push(`tool order: ${a.tools.map((t) => t.name).join(", ")} → ${b.tools.map((t) => t.name).join(", ")}`)
  }
  for (const key of ["toolChoice", "temperature", "responseFormat"] as const) {
    if (show(a[key]) !== show(b[key])) changes.push(`${key}: ${show(a[key])} → ${show(b[key])}`)
  }
  const convA = a.messages.filter((m) => m.role !== "system")
  const convB = b.messages.filter((m) => m.role !== "system")
  if (convA.length !== convB.length) changes.push(`messages: ${convA.length} recorded, ${convB.length} now`)
  for (let i = 0; i < Math.max(convA.length, convB.length); i++) {
    if (show(convA[i]) !== show(convB[i])) {
      changes.push(`message ${i + 1}: ${messageText(convA[i])} → ${messageText(convB[i])}`)
      break
    }
  }
  // Something the summaries above do not name (a message's placement among system messages, say).
  if (changes.length === 0) changes.push(`request: ${show(requestFields(a))} → ${show(requestFields(b))}`)
  return changes
}
