/**
 * Forced tool choice for `submit_slots`, as a ModelClient middleware. The DSL offers a typed answer
 * through its `submit` tool and forces it only when a skill has no other tools; seed 000 forces its
 * output tool with the investigation tools still offered. This wrapper does that on the wire: the
 * typed-answer tool is presented to the provider as `submit_slots` (and its calls mapped back), and
 * every request forces it (`"always"`, the seed's setting) or only the last step the budget allows
 * (`"last-step"`: investigate first, but never run out of steps before submitting).
 */
import { Effect } from "effect"
import type { LlmMessage, LlmResponse, ModelClient, ModelRequest } from "effect-agent-dsl"

/** The tool name the model sees. */
export const SUBMIT_SLOTS = "submit_slots"
const SUBMIT = "submit"

/** When `submit_slots` is forced. */
export type ForcePolicy = "always" | "last-step"

const rename = (name: string, from: string, to: string) => (name === from ? to : name)

const renameMessage = (m: LlmMessage): LlmMessage =>
  m.role === "assistant" && m.toolCalls !== undefined
    ? { ...m, toolCalls: m.toolCalls.map((c) => ({ ...c, name: rename(c.name, SUBMIT, SUBMIT_SLOTS) })) }
    : m.role === "tool"
      ? { ...m, name: rename(m.name, SUBMIT, SUBMIT_SLOTS) }
      : m

/**
 * Wraps `client` so the model fills `submit_slots`, forced per `policy` within `maxSteps` model calls.
 *
 * @example
 * ```ts
 * const client = forceSubmitSlots(openai("gpt-4o-mini"), { policy: "always", maxSteps: 3 })
 * ```
 */
export const forceSubmitSlots = (client: ModelClient, options: { readonly policy?: ForcePolicy; readonly maxSteps: number }): ModelClient => ({
  ...(client.metadata === undefined ? {} : { metadata: client.metadata }),
  chat: (request: ModelRequest) => {
    const step = 1 + request.messages.filter((m) => m.role === "assistant").length
    const force = (options.policy ?? "always") === "always" || step >= options.maxSteps
    const wire: ModelRequest = {
      ...request,
      messages: request.messages.map(renameMessage),
      tools: request.tools.map((t) => ({ ...t, name: rename(t.name, SUBMIT, SUBMIT_SLOTS) })),
      toolChoice: force ? { tool: SUBMIT_SLOTS } : "required"
    }
    return Effect.map(client.chat(wire), (response): LlmResponse =>
      response._tag === "ToolCalls" ? { ...response, calls: response.calls.map((c) => ({ ...c, name: rename(c.name, SUBMIT_SLOTS, SUBMIT) })) } : response)
  }
})
