/**
 * The response invariants of the protocol, in one place: a tool call's `arguments` is JSON text and
 * its `id` is unique in the response. `normalizeResponse` makes a loose, user-written response
 * (`LlmResponseInit`) satisfy them (objects serialised to JSON once, missing or repeated ids assigned);
 * `checkResponse` verifies that what a client handed the loop does, so a broken custom client becomes
 * a `ModelError` instead of a crash deep in the loop. Hand-written, not a Schema: it runs on every
 * model call.
 */
import * as Result from "effect/Result"
import type { LlmResponse, ToolCall, Usage } from "./messages.ts"
import { isRecord } from "../internal/is-record.ts"

/**
 * The JSON text of raw arguments: a string as it is, anything else serialised once (`undefined` as
 * `""`, which tools read as "no arguments"). Fails on values JSON cannot hold (cycles, BigInt).
 */
export const argumentsText = (value: unknown): Result.Result<string, string> => {
  if (typeof value === "string") return Result.succeed(value)
  if (value === undefined) return Result.succeed("")
  try {
    const text = JSON.stringify(value)
    return text === undefined ? Result.fail(`arguments of type ${typeof value} are not JSON`) : Result.succeed(text)
  } catch (error) {
    return Result.fail(`arguments are not serialisable to JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** The id the client assigns to the `index`-th call of its `callNumber`-th response when the wire has none. */
export const assignedCallId = (callNumber: number, index: number): string => `call_${callNumber}_${index}`


const isCount = (u: unknown): boolean => typeof u === "number" && Number.isFinite(u) && u >= 0

// Negative counts would let a client (or a hostile proxy) pay back the token budget.
const usageIssue = (usage: unknown): string | undefined =>
  usage === undefined || (isRecord(usage) && isCount(usage["inputTokens"]) && isCount(usage["outputTokens"]))
    ? undefined
    : "usage must be { inputTokens, outputTokens } with finite, non-negative numbers"

// The provider's id and model end up on spans: strings or nothing.
const infoIssue = (raw: Record<string, unknown>): string | undefined =>
  raw["responseId"] !== undefined && typeof raw["responseId"] !== "string"
    ? "responseId must be a string"
    : raw["responseModel"] !== undefined && typeof raw["responseModel"] !== "string"
    ? "responseModel must be a string"
    : undefined

// Keys set one by one rather than spread in from conditional objects (~2 µs a response on Node 20; see
// `assembleResponse`), in the same order.
const withExtras = <A extends object>(base: A, content: unknown, usage: unknown, raw: Record<string, unknown>): A => {
  const response: Record<string, unknown> = { ...(base as Record<string, unknown>) }
  if (content !== undefined) response["content"] = content
  if (usage !== undefined) response["usage"] = usage as Usage
  if (raw["finishReason"] !== undefined) response["finishReason"] = raw["finishReason"]
  if (raw["reasoning"] !== undefined) response["reasoning"] = raw["reasoning"]
  if (raw["responseId"] !== undefined) response["responseId"] = raw["responseId"]
  if (raw["responseModel"] !== undefined) response["responseModel"] = raw["responseModel"]
  return response as A
}

/**
 * Normalises a user-written response (see `LlmResponseInit`); `callNumber` (1 for the client's first
 * call) makes assigned ids unique across the responses of one client.
 *
 * @example
 * ```ts
 * normalizeResponse({ _tag: "ToolCalls", calls: [{ name: "add", arguments: { a: 1 } }] }, 1)
 * // Result.succeed({ _tag: "ToolCalls", calls: [{ id: "call_1_0", name: "add", arguments: '{"a":1}' }] })
 * ```
 */
export const normalizeResponse = (raw: unknown, callNumber: number): Result.Result<LlmResponse, string> => {
  try {
    return normalizeShape(raw, callNumber)
  } catch (error) {
    return Result.fail(`reading the response threw: ${error instanceof Error ? error.message : "a non-Error value"}`)
  }
}

/**
 * A client's response whose tool calls lack ids (or repeat one) gets ids assigned (`call_<n>_<index>`),
 * like `normalizeResponse`; everything else must already satisfy the protocol (`checkResponse`).
 *
 * @example
 * ```ts
 * checkResponseAssigningIds({ _tag: "ToolCalls", calls: [{ name: "add", arguments: "{}" }] }, 3) // ids "call_3_0"
 * ```
 */
export const checkResponseAssigningIds = (raw: unknown, callNumber: number): Result.Result<LlmResponse, string> => {
  const checked = checkResponse(raw)
  if (Result.isSuccess(checked)) return checked
  try {
    if (!isRecord(raw) || raw["_tag"] !== "ToolCalls" || !Array.isArray(raw["calls"])) return checked
    const seen = new Set<string>()
    const calls = (raw["calls"] as Array<unknown>).map((call, index) => {
      if (!isRecord(call)) return call
      const wireId = call["id"]
      const id = typeof wireId === "string" && wireId !== "" && !seen.has(wireId) ? wireId : assignedCallId(callNumber, index)
      seen.add(id)
      return { ...call, id }
    })
    return checkResponse({ ...raw, calls })
  } catch {
    return checked
  }
}

const normalizeShape = (raw: unknown, callNumber: number): Result.Result<LlmResponse, string> => {
  // Most answers are normalised already (JSON text, unique ids): those are used as they are, uncopied.
  const checked = checkResponse(raw)
  if (Result.isSuccess(checked)) return checked
  if (!isRecord(raw)) return Result.fail("expected an object with _tag \"Text\" or \"ToolCalls\"")
  const usage = usageIssue(raw["usage"])
  if (usage !== undefined) return Result.fail(usage)
  const info = infoIssue(raw)
  if (info !== undefined) return Result.fail(info)
  if (raw["content"] !== undefined && typeof raw["content"] !== "string") return Result.fail("content must be a string")
  if (raw["_tag"] === "Text") {
    if (typeof raw["content"] !== "string") return Result.fail("a Text response needs a string content")
    return Result.succeed(withExtras({ _tag: "Text" as const, content: raw["content"] }, undefined, raw["usage"], raw))
  }
  if (raw["_tag"] !== "ToolCalls") return Result.fail(`expected _tag "Text" or "ToolCalls", got ${JSON.stringify(raw["_tag"]) ?? "nothing"}`)
  const wire = raw["calls"]
  if (!Array.isArray(wire)) return Result.fail("a ToolCalls response needs a calls array")
  const calls: Array<ToolCall> = []
  const seen = new Set<string>()
  for (let index = 0; index < wire.length; index++) {
    const call: unknown = wire[index]
    if (!isRecord(call) || typeof call["name"] !== "string" || call["name"] === "") return Result.fail(`calls[${index}] needs a tool's name (a non-empty string)`)
    const text = argumentsText(call["arguments"])
    if (Result.isFailure(text)) return Result.fail(`calls[${index}]: ${text.failure}`)
    const wireId = call["id"]
    const id = typeof wireId === "string" && wireId !== "" && !seen.has(wireId) ? wireId : assignedCallId(callNumber, index)
    seen.add(id)
    calls.push({ id, name: call["name"], arguments: text.success })
  }
  return Result.succeed(withExtras({ _tag: "ToolCalls" as const, calls }, raw["content"], raw["usage"], raw))
}

/**
 * Verifies that a client's response satisfies the protocol: the right shape, every call's `arguments`
 * a string, every id non-empty and unique in the response. Answers the response itself (no copy).
 *
 * @example
 * ```ts
 * checkResponse({ _tag: "Text", content: "4" }) // Result.succeed(...)
 * ```
 */
export const checkResponse = (raw: unknown): Result.Result<LlmResponse, string> => {
  try {
    return checkShape(raw)
  } catch (error) {
    // A getter or proxy trap of a hostile response threw.
    return Result.fail(`reading the response threw: ${error instanceof Error ? error.message : "a non-Error value"}`)
  }
}

const checkShape = (raw: unknown): Result.Result<LlmResponse, string> => {
  if (!isRecord(raw)) return Result.fail("expected an object with _tag \"Text\" or \"ToolCalls\"")
  const usage = usageIssue(raw["usage"])
  if (usage !== undefined) return Result.fail(usage)
  const info = infoIssue(raw)
  if (info !== undefined) return Result.fail(info)
  if (raw["content"] !== undefined && typeof raw["content"] !== "string") return Result.fail("content must be a string")
  if (raw["_tag"] === "Text") {
    return typeof raw["content"] === "string" ? Result.succeed(raw as unknown as LlmResponse) : Result.fail("a Text response needs a string content")
  }
  if (raw["_tag"] !== "ToolCalls") return Result.fail(`expected _tag "Text" or "ToolCalls", got ${JSON.stringify(raw["_tag"]) ?? "nothing"}`)
  const calls = raw["calls"]
  if (!Array.isArray(calls)) return Result.fail("a ToolCalls response needs a calls array")
  // Few calls (nearly every answer) are compared with the ones before them; many go through a Set.
  const seen = calls.length > 8 ? new Set<string>() : undefined
  for (let index = 0; index < calls.length; index++) {
    const call: unknown = calls[index]
    if (!isRecord(call) || typeof call["name"] !== "string" || call["name"] === "") return Result.fail(`calls[${index}] needs a tool's name (a non-empty string)`)
    if (typeof call["arguments"] !== "string") {
      return Result.fail(`calls[${index}].arguments must be the JSON text the model sent (ModelClient.fromFunction normalises objects)`)
    }
    const id = call["id"]
    if (typeof id !== "string" || id === "" || (seen === undefined ? repeats(calls, index, id) : seen.has(id))) {
      return Result.fail(`calls[${index}].id must be a non-empty id, unique in the response`)
    }
    seen?.add(id)
  }
  return Result.succeed(raw as unknown as LlmResponse)
}

/**
 * Whether a call before `index` has `id` (their shapes checked already): for a few calls, a scan
 * rather than a Set, as every model call is checked (a Set per check was ~130 bytes).
 */
const repeats = (calls: ReadonlyArray<unknown>, index: number, id: string): boolean => {
  for (let earlier = 0; earlier < index; earlier++) if ((calls[earlier] as Record<string, unknown>)["id"] === id) return true
  return false
}
