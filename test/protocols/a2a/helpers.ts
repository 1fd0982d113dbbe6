/**
 * Test helpers for the A2A border: the official SDK's client over a server of ours, messages in the
 * SDK's shape, and a few agents (plain text, with an approval tool, with a slow tool).
 */
import { type Message, type Part, Role, type SendMessageRequest, type Task } from "@a2a-js/sdk"
import { type Client, ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client"

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
