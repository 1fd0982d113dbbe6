/**
 * Response parts: a model's answer as it streams. Text and reasoning arrive as deltas; a tool call
 * arrives as a start (its index in the response, its id when the wire has one, its name), argument
 * deltas (raw JSON text, torn anywhere), and an end; usage (cumulative for this response) and the
 * finish reason may come last; the provider's response id and model may come anywhere. `PartsAssembler` folds parts back into the `LlmResponse` the loop
 * acts on, so a streamed answer and the same answer in one piece mean the same thing; `partsOf` goes
 * the other way (a whole response as parts, optionally torn into chunks).
 */
import * as Result from "effect/Result"
import { assembleResponse } from "./assemble-response.ts"
import type { FinishReason, LlmResponse, ReasoningPart, ToolCall, Usage } from "./messages.ts"
import { assignedCallId } from "./normalize-response.ts"

/**
 * One piece of a streamed answer.
 *
 * @example
 * ```ts
 * const parts: ReadonlyArray<ResponsePart> = [
 *   { _tag: "ToolCallStart", index: 0, id: "c1", name: "add" },
 *   { _tag: "ToolCallDelta", index: 0, delta: '{"a":1,' },
 *   { _tag: "ToolCallDelta", index: 0, delta: '"b":2}' },
 *   { _tag: "ToolCallEnd", index: 0 },
 *   { _tag: "Finish", reason: "tool-calls" }
 * ]
 * ```
 */
export type ResponsePart =
  | { readonly _tag: "TextDelta"; readonly delta: string }
  | { readonly _tag: "ReasoningDelta"; readonly delta: string }
  /**
   * Closes the thinking block the reasoning deltas built, with the provider's signature when it signs
   * it (Anthropic's `signature_delta`); the next deltas start a new block.
   */
  | { readonly _tag: "ReasoningEnd"; readonly signature?: string | undefined }
  /** A whole reasoning block (signed thinking, redacted data), for providers that send it in one piece. */
  | { readonly _tag: "Reasoning"; readonly part: ReasoningPart }
  | { readonly _tag: "ToolCallStart"; readonly index: number; readonly id?: string | undefined; readonly name: string }
  | { readonly _tag: "ToolCallDelta"; readonly index: number; readonly delta: string }
  | { readonly _tag: "ToolCallEnd"; readonly index: number }
  /** Usage of this response so far (cumulative: the last one counts). */
  | { readonly _tag: "Usage"; readonly usage: Usage }
  | { readonly _tag: "Finish"; readonly reason?: FinishReason | undefined }
  /**
   * What the provider says about the answer itself: its id and the model that gives it (OpenAI's
   * chunks, Anthropic's `message_start`, ...). Not content; a later part's fields replace earlier ones.
   */
  | { readonly _tag: "ResponseInfo"; readonly id?: string | undefined; readonly model?: string | undefined }

/**
 * The `ResponseInfo` part for what a wire says about its answer (an id, a model), or none when it says
 * nothing usable (missing, empty or not a string).
 *
 * @example
 * ```ts
 * responseInfoParts("msg_01", "claude-sonnet-4-6") // [{ _tag: "ResponseInfo", id: "msg_01", model: "claude-sonnet-4-6" }]
 * responseInfoParts(undefined, "") // []
 * ```
 */
export const responseInfoParts = (id: unknown, model: unknown): Array<ResponsePart> => {
  const known = (u: unknown): string | undefined => (typeof u === "string" && u !== "" ? u : undefined)
  const part = { _tag: "ResponseInfo" as const, id: known(id), model: known(model) }
  return part.id === undefined && part.model === undefined ? [] : [part]
}

interface OpenCall {
  id: string | undefined
  name: string
  arguments: string
}

/**
 * Folds response parts into a response. Tool calls are assembled by index (a delta for an index that
 * was never started is an error, as are a start without a name and a start with another name for an open index); calls without an
 * id get `call_<response>_<index>`; consecutive reasoning deltas make one `Thinking` block, closed (and
 * signed) by `ReasoningEnd`.
 *
 * @example
 * ```ts
 * const assembler = new PartsAssembler(1)
 * parts.forEach((p) => assembler.add(p))
 * assembler.response() // Result.succeed({ _tag: "ToolCalls", calls: [{ id: "c1", name: "add", arguments: '{"a":1,"b":2}' }], finishReason: "tool-calls" })
 * ```
 */
export class PartsAssembler {
  #text = ""
  readonly #reasoning: Array<ReasoningPart> = []
  #thinking: string | undefined
  readonly #calls = new Map<number, OpenCall>()
  #usage: Usage | undefined
  #finish: FinishReason | undefined
  #responseId: string | undefined
  #responseModel: string | undefined
  #issue: string | undefined
  /** Whether a text, reasoning or tool-call part arrived (usage, finish and response info are not content). */
  started = false

  /** `responseNumber` distinguishes the ids assigned to calls of different responses. */
  constructor(readonly responseNumber: number = 1) {}

  add(part: ResponsePart): void {
    switch (part._tag) {
      case "TextDelta":
        this.#text += part.delta
        this.started = true
        return
      case "ReasoningDelta":
        this.#thinking = (this.#thinking ?? "") + part.delta
        this.started = true
        return
      case "ReasoningEnd":
        this.#closeThinking(part.signature)
        return
      case "Reasoning":
        this.#closeThinking()
        this.#reasoning.push(part.part)
        this.started = true
        return
      case "ToolCallStart": {
        this.started = true
        const open = this.#calls.get(part.index)
        // A call without a name is unreadable, as a whole answer's is: never a call the allowlist refuses as "".
        if (typeof part.name !== "string" || part.name === "") this.#issue ??= `tool call ${part.index} has no name`
        else if (open === undefined) this.#calls.set(part.index, { id: part.id, name: part.name, arguments: "" })
        else if (open.name !== part.name) this.#issue ??= `tool call ${part.index} started twice, as "${open.name}" and "${part.name}"`
        else open.id ??= part.id
        return
      }
      case "ToolCallDelta": {
        const open = this.#calls.get(part.index)
        if (open === undefined) this.#issue ??= `arguments arrived for tool call ${part.index}, which never started`
        else open.arguments += part.delta
        return
      }
      case "ToolCallEnd":
        return
      case "Usage":
        this.#usage = part.usage
        return
      case "Finish":
        this.#finish = part.reason
        return
      case "ResponseInfo":
        // Parts may come from outside (cassettes, custom clients): only non-empty strings are kept.
        if (typeof part.id === "string" && part.id !== "") this.#responseId = part.id
        if (typeof part.model === "string" && part.model !== "") this.#responseModel = part.model
        return
    }
  }

  /** The usage reported so far. */
  get usage(): Usage | undefined {
    return this.#usage
  }

  /** The text received so far. */
  get text(): string {
    return this.#text
  }

  /** The assembled response, or why the parts do not make one. */
  response(): Result.Result<LlmResponse, string> {
    if (this.#issue !== undefined) return Result.fail(this.#issue)
    this.#closeThinking()
    const seen = new Set<string>()
    const calls: Array<ToolCall> = [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => {
        let id = call.id === undefined || call.id === "" || seen.has(call.id) ? assignedCallId(this.responseNumber, index) : call.id
        while (seen.has(id)) id = `${id}_`
        seen.add(id)
        return { id, name: call.name, arguments: call.arguments }
      })
    return Result.succeed(assembleResponse({ content: this.#text, calls, usage: this.#usage, finishReason: this.#finish, reasoning: this.#reasoning, responseId: this.#responseId, responseModel: this.#responseModel }))
  }

  #closeThinking(signature?: string): void {
    if (this.#thinking === undefined && signature === undefined) return
    const text = this.#thinking ?? ""
    this.#reasoning.push(signature === undefined ? { _tag: "Thinking", text } : { _tag: "Thinking", text, signature })
    this.#thinking = undefined
  }
}

/** How `partsOf` tears a text into deltas: the pieces, in order, that concatenate to the text. */
export type Chunker = (text: string) => ReadonlyArray<string>

const whole: Chunker = (text) => (text === "" ? [] : [text])

/**
 * Tears texts into pieces of `size` characters (the last one shorter), counted in code points so that
 * no piece holds half of a surrogate pair (an emoji stays whole; a combined character such as a letter
 * and its accent may be split, as tokenizers split them, every piece still a well-formed string).
 * `Infinity` keeps each text whole. A size that is not a positive whole number (or `Infinity`) throws a
 * `RangeError` saying so (the scripted model's options report it as `AgentConfigError`).
 *
 * @example
 * ```ts
 * chunksOf(3)("abcdefg") // ["abc", "def", "g"]
 * chunksOf(1)("a😀")     // ["a", "😀"]
 * ```
 */
export const chunksOf = (size: number): Chunker => {
  if (size === Number.POSITIVE_INFINITY) return whole
  if (!Number.isInteger(size) || size <= 0) {
    throw new RangeError(`chunk must be a positive whole number of characters (or Infinity), got ${size}`)
  }
  return (text) => {
    const points = Array.from(text)
    const pieces: Array<string> = []
    for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(""))
    return pieces
  }
}

/**
 * A whole response as parts: the provider's response id and model (when known), reasoning, text, each
 * tool call (start, argument deltas, end), usage and finish. `chunk` tears every text (content, thinking, arguments); by default each text is one delta.
 * Assembling the parts gives back an equal response.
 *
 * @example
 * ```ts
 * partsOf({ _tag: "Text", content: "hello" }, chunksOf(2)) // TextDelta "he", "ll", "o", then Finish
 * ```
 */
export const partsOf = (response: LlmResponse, chunk: Chunker = whole): Array<ResponsePart> => {
  const parts: Array<ResponsePart> = []
  if (response.responseId !== undefined || response.responseModel !== undefined) {
    parts.push({ _tag: "ResponseInfo", id: response.responseId, model: response.responseModel })
  }
  const reasoning = response.reasoning ?? []
  for (const block of reasoning) {
    // Thinking with text streams as deltas closed by `ReasoningEnd` (carrying its signature); others come whole.
    if (block._tag === "Thinking" && block.text !== "") {
      for (const delta of chunk(block.text)) parts.push({ _tag: "ReasoningDelta", delta })
      parts.push(block.signature === undefined ? { _tag: "ReasoningEnd" } : { _tag: "ReasoningEnd", signature: block.signature })
    } else parts.push({ _tag: "Reasoning", part: block })
  }
  for (const delta of chunk(response.content ?? "")) parts.push({ _tag: "TextDelta", delta })
  if (response._tag === "ToolCalls") {
    response.calls.forEach((call, index) => {
      parts.push({ _tag: "ToolCallStart", index, id: call.id, name: call.name })
      for (const delta of chunk(call.arguments)) parts.push({ _tag: "ToolCallDelta", index, delta })
      parts.push({ _tag: "ToolCallEnd", index })
    })
  }
  if (response.usage !== undefined) parts.push({ _tag: "Usage", usage: response.usage })
  parts.push({ _tag: "Finish", reason: response.finishReason })
  return parts
}
