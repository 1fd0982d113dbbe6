/**
 * A server built on the official SDK's own request handler (not ours), with a scripted executor, for
 * testing our client against code this project did not write; and a raw server that drops its stream.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { type AgentCard, type Message, Role, TaskState } from "@a2a-js/sdk"
import { AgentEvent, type AgentExecutor, DefaultRequestHandler, type ExecutionEventBus, InMemoryTaskStore, type RequestContext } from "@a2a-js/sdk/server"
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express"
import express from "express"

export interface Script {
  /** What the executor does with a task; `bus` helpers publish in the SDK's shapes. */
  readonly execute: (context: RequestContext, out: Publisher) => Promise<void>
}

export interface Publisher {
  readonly status: (state: TaskState, text?: string, metadata?: Record<string, unknown>) => void
  readonly artifact: (parts: Message["parts"]) => void
  readonly finished: () => void
  readonly bus: ExecutionEventBus
}

export interface SdkServer {
  readonly url: string
  readonly cancels: Array<string>
  readonly close: () => Promise<void>
}

export const sdkServer = async (script: Script, options: { readonly streaming?: boolean } = {}): Promise<SdkServer> => {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const cancels: Array<string> = []
  const aborters = new Map<string, () => void>()
  const card: AgentCard = {
    name: "sdk agent",
    description: "A scripted agent on the SDK's own handler",
    supportedInterfaces: [{ url: `${url}/rpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: options.streaming ?? true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [],
    signatures: []
  }
  const executor: AgentExecutor = {
    execute: async (context, bus) => {
      const { taskId, contextId } = context
      const message = (parts: Message["parts"]): Message => ({ messageId: crypto.randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] })
      if (context.task === undefined) {
        bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined }, artifacts: [], history: [context.userMessage], metadata: undefined }))
      }
      const out: Publisher = {
        bus,
        status: (state, text, metadata) =>
          bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state, message: text === undefined ? undefined : message([{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }]), timestamp: undefined }, metadata })),
        artifact: (parts) => bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: { artifactId: "a1", name: "answer", description: "", parts, metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined })),
        finished: () => bus.finished()
      }
      await new Promise<void>((resolve) => {
        aborters.set(taskId, () => {
          out.status(TaskState.TASK_STATE_CANCELED, "canceled")
          out.finished()
          resolve()
        })
        script.execute(context, out).then(resolve, resolve)
      })
    },
    cancelTask: async (taskId) => {
      cancels.push(taskId)
      aborters.get(taskId)?.()
    }
  }
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor)
  const app = express()
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }))
  app.use("/rpc", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
  server.on("request", app)
  return {
    url,
    cancels,
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections()))
  }
}

/** A server whose card is fine but whose stream sends one working update and then drops the connection. */
export const droppingServer = async (): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const server: Server = createServer((req, res) => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    if (req.url?.startsWith("/.well-known")) {
      res.setHeader("content-type", "application/json")
      res.end(JSON.stringify({
        name: "dropper",
        description: "drops its streams",
        supportedInterfaces: [{ url: `${url}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
        version: "1",
        capabilities: { streaming: true },
        defaultInputModes: ["text/plain"],
        defaultOutputModes: ["text/plain"],
        skills: []
      }))
      return
    }
    if (req.url?.startsWith("/hang")) return // never answers
    if (req.method !== "POST") {
      res.writeHead(404).end()
      return
    }
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      const id = JSON.parse(body).id
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result: { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING" } } } })}\n\n`)
      setTimeout(() => res.destroy(), 20)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections()))
  }
}
