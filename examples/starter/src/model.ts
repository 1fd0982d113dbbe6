/**
 * Which model the assistant talks to. With `AI_PROVIDER` set, a real provider from the environment
 * (`fromEnv()`: openai, ollama or anthropic; see the README). Without it, a scripted model: a
 * deterministic stand-in that needs no key and no network, so `npm start` works on a fresh checkout.
 */
import { fromEnv, type ModelClient, text, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"

export interface ChosenModel {
  readonly client: ModelClient
  readonly label: string
  readonly maxTurns: number
}

/** The scripted stand-in: it answers from the last message, so it can follow the demo conversation. */
export const scripted = (): ModelClient =>
  scriptedModel((request) => {
    const last = request.messages.at(-1)
    // The order the conversation is about: the last id mentioned in it (the session brings earlier turns).
    const mentioned = request.messages.flatMap((message) => message.content.match(/\b[A-Z]-\d{4}\b/g) ?? [])
    const orderId = (text: string) => /\b[A-Z]-\d{4}\b/.exec(text)?.[0] ?? mentioned.at(-1) ?? "A-1001"
    if (last?.role === "user") {
      if (/refund|broken|money back/i.test(last.content)) {
        return toolCalls([{ name: "refundOrder", arguments: { orderId: orderId(last.content), reason: last.content } }])
      }
      if (/order|where|status/i.test(last.content)) return toolCalls([{ name: "lookupOrder", arguments: { orderId: orderId(last.content) } }])
      return text("I am a scripted model: ask where order A-1001 is, or for a refund of it. Set AI_PROVIDER to talk to a real model.")
    }
    if (last?.role === "tool" && last.name === "lookupOrder") return text(`Here is what I found: ${last.content}.`)
    if (last?.role === "tool" && last.name === "refundOrder") {
      return text(last.content.startsWith("refunded") ? `Done: ${last.content}.` : `I could not refund it: ${last.content.replace(/\.$/, "")}.`)
    }
    return text("Sorry, I lost track. Could you ask again?")
  })

/** A provider from the environment when `AI_PROVIDER` is set, the scripted model otherwise. */
export const chooseModel = (env: NodeJS.ProcessEnv = process.env): ChosenModel => {
  if ((env.AI_PROVIDER ?? "").trim() !== "") {
    const found = fromEnv(env)
    return { client: found.client, label: `${found.provider} ${found.model}`, maxTurns: found.budget.maxTurns ?? 6 }
  }
  return { client: scripted(), label: "scripted (a deterministic stand-in; set AI_PROVIDER to use a real model)", maxTurns: 6 }
}
