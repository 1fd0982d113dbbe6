/**
 * Two agents talking A2A on loopback:
 *   npm run example:a2a
 * A "bank" agent is served as an A2A agent (Agent Card at /.well-known/agent-card.json, JSON-RPC on
 * A2A 1.0 and 0.3, a bearer token required). Its `transfer` tool needs approval, so a task that pays
 * someone stops in `input-required`; the next message on the same task ("approve") resumes it. Then a
 * "concierge" agent of ours uses a read-only remote agent as a tool through `a2aAgent(url)`. Last, a
 * "treasurer" of ours uses the bank through `a2aRemoteAgent(url).asTool(...)`: the bank's approval
 * question suspends the treasurer's run, and its resume answers the same remote task.
 * Without AI_PROVIDER the models are scripted (no network, no key); with it, the provider from the environment.
 */
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { Role, TaskState } from "@a2a-js/sdk"
import { Effect, Schema } from "effect"
import { agent, Decision, fromEnv, type ModelClient, text, tool, toolCalls } from "effect-agent-dsl"
import { a2aAgent, a2aRemoteAgent, serveA2a } from "effect-agent-dsl/a2a"
import { scriptedModel } from "effect-agent-dsl/testing"

const token = "example-token"
const live = (process.env.AI_PROVIDER ?? "").trim() !== ""
const model = (scripted: () => ModelClient): ModelClient => (live ? fromEnv().client : scripted())

const transfer = tool("transfer", {
  description: "Send money to someone",
  args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
  needsApproval: true,
  run: ({ to, amount }) => `sent ${amount} to ${to}`
})
const bank = agent("bank")
  .prompt("You move money with the transfer tool.")
  .model(model(() =>
    scriptedModel((request) =>
      request.messages.at(-1)?.role === "tool"
        ? text(`Done: ${request.messages.at(-1)?.content}.`)
        : toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob", amount: 20 } }])
    )
  ))
  .tools({ transfer })

const rates = agent("rates")
  .prompt("You answer questions about exchange rates.")
  .model(model(() => scriptedModel(() => text("1 EUR = 1.08 USD"))))

const bankServer = await serveA2a(bank, { bearer: (given) => given === token })
const ratesServer = await serveA2a(rates)
console.log(`bank card:  ${bankServer.url}/.well-known/agent-card.json`)
console.log(`rates card: ${ratesServer.url}/.well-known/agent-card.json`)

// 1. The official A2A client pays bob: input-required, then approved on the same task.
const authorised: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${token}` } })
const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorised })] }).createFromUrl(bankServer.url)
const say = (words: string, ids: { taskId?: string; contextId?: string } = {}) => ({
  tenant: "",
  message: {
    messageId: crypto.randomUUID(), contextId: ids.contextId ?? "", taskId: ids.taskId ?? "", role: Role.ROLE_USER,
    parts: [{ content: { $case: "text" as const, value: words }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined, extensions: [], referenceTaskIds: []
  },
  configuration: undefined,
  metadata: undefined
})
const asked = await client.sendMessage(say("pay bob 20"))
if (!("id" in asked)) throw new Error("expected a task")
console.log(`task ${asked.id}: ${TaskState[asked.status!.state]}`)
const approved = await client.sendMessage(say("approve", { taskId: asked.id, contextId: asked.contextId }))
if (!("id" in approved)) throw new Error("expected a task")
const output = approved.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("")
console.log(`task ${approved.id}: ${TaskState[approved.status!.state]} — ${output}`)

// 2. A remote A2A agent as a tool of ours.
const fx = await a2aAgent(ratesServer.url, { name: "rates", timeoutMs: 30_000 })
const concierge = agent("concierge")
  .prompt("Answer travel questions; ask the rates agent about money.")
  .model(model(() =>
    scriptedModel((request) =>
      request.messages.at(-1)?.role === "tool"
        ? text(`The rates agent says: ${request.messages.at(-1)?.content}`)
        : toolCalls([{ id: "r1", name: "rates", arguments: { input: "EUR to USD?" } }])
    )
  ))
  .tools({ rates: fx })
console.log(await concierge.run("How many dollars for 100 euros?"))

// 3. The remote bank as an agent of ours: its approval question suspends OUR run; our resume answers
//    the same remote task.
const remoteBank = await a2aRemoteAgent(bankServer.url, { name: "bank", headers: { authorization: `Bearer ${token}` } })
const treasurer = agent("treasurer")
  .prompt("Pay people through the bank agent.")
  .model(model(() =>
    scriptedModel((request) =>
      request.messages.at(-1)?.role === "tool"
        ? text(`The bank says: ${request.messages.at(-1)?.content}`)
        : toolCalls([{ id: "b1", name: "bank", arguments: { input: "pay carol 5" } }])
    )
  ))
  .tools({ bank: remoteBank.asTool({ name: "bank", description: "The bank agent, over A2A" }) })
const first = await treasurer.run("Pay carol 5")
if (first._tag === "Suspended") {
  const call = first.pending[0]!
  console.log(`our run waits on ${call.tool}: ${(call.args as unknown as { question: string }).question.split("\n")[0]}`)
  const done = await Effect.runPromise(treasurer.resume(first.snapshot, { [call.id]: Decision.approve }))
  console.log(done._tag === "Completed" ? done.output : done._tag)
}

await Promise.all([bankServer.close(), ratesServer.close()])
