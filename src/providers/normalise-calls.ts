/**
 * What every adapter does to the tool calls of a reply before the loop sees them: arguments as JSON
 * text (objects serialised once) and a unique, non-empty id on every call (when the wire has none, as
 * Ollama and many OpenAI-compatible servers do not give one).
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import type { ToolCall } from "../model/messages.ts"

/** A call as it came off the wire: any id (maybe none), arguments as text or an object. */
export interface WireCall {
  readonly id?: string | null | undefined
  readonly name: string
  readonly arguments: unknown
}

/**
 * Arguments as JSON text: strings pass as they are, anything else is serialised once; none (missing,
 * `null`, `""` or only whitespace) is `"{}"`, whether the reply came whole or streamed.
 *
 * @example
 * ```ts
 * argumentsText({ a: 1 }) // '{"a":1}'
 * argumentsText("") // "{}"
 * ```
 */
export const argumentsText = (raw: unknown): string =>
  typeof raw === "string" ? (raw.trim() === "" ? "{}" : raw) : raw === undefined || raw === null ? "{}" : JSON.stringify(raw)

/**
 * A call's name as the wire gave it; a call without one (missing, empty, not a string) throws, inside
 * the adapter's own `Effect.try` or `decodeChunk`, so the reply fails with a `ModelError` (not
 * retryable), streamed or whole: a call named `""` or `"undefined"` would only reach the allowlist.
 *
 * @example
 * ```ts
 * callName("add", call) // "add"
 * callName(undefined, call) // throws "a tool call has no name: {...}"
 * ```
 */
export const callName = (name: unknown, call: unknown): string => {
  if (typeof name === "string" && name !== "") return name
  throw new Error(`a tool call has no name: ${JSON.stringify(call) ?? String(call)}`)
}

/**
 * Gives every call a non-empty id unique within the reply (`call_<random>` from Effect's `Random`, so a
 * seeded Random makes them deterministic) and its arguments as JSON text.
 *
 * @example
 * ```ts
 * const calls = yield* normaliseCalls([{ name: "add", arguments: { a: 1, b: 2 } }])
 * // [{ id: "call_k3j9x0a1", name: "add", arguments: '{"a":1,"b":2}' }]
 * ```
 */
export const normaliseCalls = (calls: ReadonlyArray<WireCall>): Effect.Effect<Array<ToolCall>> =>
  Effect.gen(function*() {
    const seen = new Set<string>()
    const out: Array<ToolCall> = []
    for (const call of calls) {
      let id = typeof call.id === "string" && call.id !== "" && !seen.has(call.id) ? call.id : undefined
      while (id === undefined || seen.has(id)) {
        const n = yield* Random.nextIntBetween(0, 2 ** 31 - 1)
        id = `call_${n.toString(36).padStart(6, "0")}`
      }
      seen.add(id)
      out.push({ id, name: call.name, arguments: argumentsText(call.arguments) })
    }
    return out
  })

