/**
 * Message parts at the A2A border: the parts of a user message decoded into an agent's input (text
 * for an agent without an input Schema, a data part or JSON text decoded with its Schema), an output
 * turned into parts (text for strings, a data part for anything else), and the decisions a client
 * sends on an `input-required` task. Anything else is refused with a reason, which the server answers
 * with the protocol's invalid-params error (-32602).
 */
import type { Part } from "@a2a-js/sdk"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Decision, type Decisions } from "../../dsl/decision.ts"
import { costGuard } from "../../internal/decode-cost.ts"
import type { WaitingCall } from "../../dsl/events.ts"

/** A text part. */
export const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" })

/** A data part (any JSON value). */
export const dataPart = (data: unknown): Part => ({ content: { $case: "data", value: data }, metadata: undefined, filename: "", mediaType: "application/json" })

/**
 * An output as parts: a string as one text part, anything else as one data part.
 *
 * @example
 * ```ts
 * outputParts({ total: 3 }) // [{ content: { $case: "data", value: { total: 3 } }, ... }]
 * ```
 */
export const outputParts = (output: unknown): ReadonlyArray<Part> => (typeof output === "string" ? [textPart(output)] : [dataPart(output ?? null)])

/**
 * How deep a data part may nest (arrays and objects): far beyond any input an agent takes, and well
 * short of the depth where JSON handling (ours and the SDK's) overflows the stack.
 */
const maxDataDepth = 64

/** True when `value` nests deeper than `max` levels (walked without recursion). */
const nestsDeeperThan = (value: unknown, max: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!
    if (typeof item !== "object" || item === null) continue
    if (depth > max) return true
    for (const child of Object.values(item)) if (typeof child === "object" && child !== null) stack.push([child, depth + 1])
  }
  return false
}

/** The kind of each part, refusing parts with no content, content of an unknown kind, or data nested too deep. */
const readParts = (parts: unknown): Result.Result<ReadonlyArray<{ readonly kind: "text"; readonly text: string } | { readonly kind: "data"; readonly data: unknown }>, string> => {
  if (!Array.isArray(parts) || parts.length === 0) return Result.fail("the message has no parts")
  const read: Array<{ readonly kind: "text"; readonly text: string } | { readonly kind: "data"; readonly data: unknown }> = []
  for (const [index, part] of parts.entries()) {
    const content = (part as Part | null | undefined)?.content
    if (content === undefined || content === null || typeof content !== "object") return Result.fail(`part ${index} has no content (text, data, raw or url)`)
    if (content.$case === "text") {
      if (typeof content.value !== "string") return Result.fail(`part ${index}: its text is not a string`)
      read.push({ kind: "text", text: content.value })
    } else if (content.$case === "data") {
      if (content.value === undefined) return Result.fail(`part ${index}: its data is missing`)
      if (nestsDeeperThan(content.value, maxDataDepth)) return Result.fail(`part ${index}: its data is nested more than ${maxDataDepth} levels deep`)
      read.push({ kind: "data", data: content.value })
    } else if (content.$case === "raw" || content.$case === "url") {
      return Result.fail(`part ${index}: file parts are not accepted by this agent (text or data only)`)
    } else {
      return Result.fail(`part ${index} has content of an unknown kind`)
    }
  }
  return Result.succeed(read)
}

/**
 * The agent's input from a message's parts. Without an input Schema the input is text: the text
 * parts joined by newlines (data parts as JSON). With one, a single data part is decoded with it, or
 * the text (as JSON when it parses, else as the string) is.
 *
 * @example
 * ```ts
 * inputFromParts([textPart("2 + 2?")], undefined) // Result.succeed("2 + 2?")
 * ```
 */
export const inputFromParts = (parts: unknown, input: Schema.Top | undefined): Result.Result<unknown, string> => {
  const read = readParts(parts)
  if (Result.isFailure(read)) return Result.fail(read.failure)
  const items = read.success
  if (input === undefined) {
    try {
      return Result.succeed(items.map((p) => (p.kind === "text" ? p.text : JSON.stringify(p.data) ?? "")).join("\n"))
    } catch (error) {
      return Result.fail(`a data part is not JSON: ${String(error)}`)
    }
  }
  const data = items.filter((p) => p.kind === "data")
  let candidate: unknown
  if (data.length > 1) return Result.fail("the message has more than one data part; this agent takes one input")
  if (data.length === 1 && items.length === 1) candidate = data[0]!.data
  else if (data.length === 1) return Result.fail("the message mixes a data part with text; this agent takes one input")
  else {
    const text = items.map((p) => (p.kind === "text" ? p.text : "")).join("\n")
    try {
      candidate = JSON.parse(text)
    } catch {
      candidate = text
    }
  }
  // A Schema whose unions may try one value many times: a peer's input that would cost more than its size allows is refused undecoded.
  const tooCostly = costGuard(input.ast, (limit) => `checking it would try the input Schema's alternatives (unions) over its parts more than ${limit} times`)?.(candidate)
  if (tooCostly !== undefined) return Result.fail(`the input could not be checked: ${tooCostly}`)
  const decoded = Schema.decodeUnknownResult(input as Schema.Codec<unknown, unknown>)(candidate, { errors: "all", onExcessProperty: "error" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  // A text that happened to parse as JSON may still be the string the Schema wants.
  if (typeof candidate !== "string" && data.length === 0) {
    const text = items.map((p) => (p.kind === "text" ? p.text : "")).join("\n")
    const asText = Schema.decodeUnknownResult(input as Schema.Codec<unknown, unknown>)(text)
    if (Result.isSuccess(asText)) return Result.succeed(asText.success)
  }
  return Result.fail(`the input does not match the agent's input Schema:\n${decoded.failure.message}`)
}

const denyWords = /^\s*(deny|denied|no|reject|rejected)\b[\s:,.-]*(.*)$/is
const approveWords = /^\s*(approve|approved|yes|ok|okay)\b[\s.!]*$/i

/**
 * The decisions a message gives on the calls a suspended run waits for: a data part
 * `{ decisions: { <call id>: "approve" | { deny: reason } | { edit: args } } }` (one per waiting call),
 * or a text answer for all of them: `approve` / `yes`, or `deny <reason>` / `no <reason>`.
 *
 * @example
 * ```ts
 * decisionsFromParts([textPart("approve")], waiting) // Result.succeed({ call_1: Decision.approve })
 * ```
 */
export const decisionsFromParts = (parts: unknown, pending: ReadonlyArray<WaitingCall>): Result.Result<Decisions, string> => {
  const read = readParts(parts)
  if (Result.isFailure(read)) return Result.fail(read.failure)
  const items = read.success
  const all = (decision: Decision): Decisions => Object.fromEntries(pending.map((call) => [call.id, decision]))
  const data = items.find((p) => p.kind === "data")
  if (data !== undefined && data.kind === "data") {
    const given = (data.data as { readonly decisions?: unknown } | null)?.decisions
    if (typeof given !== "object" || given === null || Array.isArray(given)) return Result.fail("the data part has no `decisions` object")
    const decisions: Record<string, Decision> = {}
    for (const call of pending) {
      const value = (given as Record<string, unknown>)[call.id]
      if (value === "approve") decisions[call.id] = Decision.approve
      else if (typeof value === "object" && value !== null && typeof (value as { deny?: unknown }).deny === "string") decisions[call.id] = Decision.deny((value as { deny: string }).deny)
      else if (typeof value === "object" && value !== null && "edit" in value) decisions[call.id] = Decision.edit((value as { edit: unknown }).edit)
      else return Result.fail(`no decision for call "${call.id}" (${call.tool}): give "approve", { "deny": reason } or { "edit": args }`)
    }
    const unknown = Object.keys(given).filter((id) => !pending.some((call) => call.id === id))
    if (unknown.length > 0) return Result.fail(`decisions for calls that do not wait: ${unknown.join(", ")}`)
    return Result.succeed(decisions)
  }
  const text = items.map((p) => (p.kind === "text" ? p.text : "")).join(" ").trim()
  if (approveWords.test(text)) return Result.succeed(all(Decision.approve))
  const denied = denyWords.exec(text)
  if (denied !== null) return Result.succeed(all(Decision.deny(denied[2]?.trim() || "denied by the A2A client")))
  return Result.fail("the task waits for a decision: answer \"approve\", \"deny <reason>\", or a data part { decisions: { <call id>: ... } }")
}

/**
 * The parts that tell a client what a suspended run waits for: a sentence, and a data part listing
 * the waiting calls (`{ pending: [{ id, tool, args, reason? }] }`).
 *
 * @example
 * ```ts
 * pendingParts([{ id: "c1", tool: "transfer", args: { amount: 10 } }])
 * ```
 */
export const pendingParts = (pending: ReadonlyArray<WaitingCall>): ReadonlyArray<Part> => [
  textPart(`Waiting for approval of ${pending.map((call) => `${call.tool} (${call.id})`).join(", ")}. Answer "approve" or "deny <reason>".`),
  dataPart({ pending: pending.map((call) => ({ id: call.id, tool: call.tool, args: call.args ?? null, ...(call.reason === undefined ? {} : { reason: call.reason }) })) })
]
