/**
 * Test helpers for the A2A border: the official SDK's client over a server of ours, messages in the
 * SDK's shape, and a few agents (plain text, with an approval tool, with a slow tool).
 */
import { type Message, type Part, Role, type SendMessageRequest, type Task } from "@a2a-js/sdk"
import { type Client, ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { Schema } from "effect"
import { agent, tool } from "../../../src/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"

export const sdkClient = async (url: string, headers: Record<string, string> = {}): Promise<Client> => {
  const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...headers } })
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] })
  return factory.createFromUrl(url)
}

export const text = (value: string): Part => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" })

export const userMessage = (parts: ReadonlyArray<Part>, ids: { readonly taskId?: string; readonly contextId?: string } = {}): Message => ({
  messageId: crypto.randomUUID(),
  contextId: ids.contextId ?? "",
  taskId: ids.taskId ?? "",
  role: Role.ROLE_USER,
  parts: [...parts],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

export const request = (message: Message): SendMessageRequest => ({
  tenant: "",
  message,
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
  metadata: undefined
})

export const asTask = (result: unknown): Task => {
  const task = result as Task
  if (typeof task?.id !== "string" || task.status === undefined) throw new Error(`not a task: ${JSON.stringify(result)}`)
  return task
}

export const outputText = (task: Task): string =>
  task.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === "text" ? p.content.value : JSON.stringify(p.content?.value))).join("")

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * A bank agent whose `transfer` needs approval; `transferRuns()` counts the transfers that really ran.
 * Its model asks for one transfer, then answers with the last tool result.
 */
export const makeBank = () => {
  let runs = 0
  const transfer = tool("transfer", {
    description: "Moves money",
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: true,
    run: ({ to, amount }) => {
      runs += 1
      return `sent ${amount} to ${to}`
    }
  })
  const bankModel = scriptedModel((req) =>
    req.messages.some((m) => m.role === "tool")
      ? { _tag: "Text", content: `done: ${String(req.messages.filter((m) => m.role === "tool").at(-1)?.content)}` }
      : { _tag: "ToolCalls", calls: [{ id: `call_${req.messages.length}`, name: "transfer", arguments: { to: "bob", amount: 10 } }] }
  )
  return { bank: agent("bank").prompt("Pays people.").model(bankModel).tools({ transfer }), transferRuns: () => runs }
}
