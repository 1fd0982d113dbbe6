/**
 * A remote A2A agent as an agent of ours: `a2aRemoteAgent(url)` is an agent whose model is the remote
 * agent (a `ModelClient` over A2A), so every border of our runs holds across it:
 *
 * - **Conversation**: a turn sends the remote one message: the latest user message, after the
 *   conversation so far when there is one (a handoff hands over the whole transcript), as text.
 * - **Progress**: the remote's status updates stream as reasoning deltas and its artifacts as text
 *   deltas of the run (`runStream`, a parent's stream when it is a tool or handoff target, AG-UI and
 *   the UI message stream show them); its final answer is a `ModelResponse`; the usage it reports
 *   (`metadata.usage`) is the response's usage, charged to every enclosing budget.
 * - **Input required**: a remote task that waits for input becomes a call of the agent's
 *   `reply_to_<name>` tool, which needs approval: the run suspends (and so does a run that calls it as
 *   a tool or handed off to it), its waiting call carrying `{ taskId, contextId, question }`. Resume
 *   it with `Decision.edit({ ...args, answer: "…" })` (or `Decision.approve`, which answers
 *   "approve"): the answer goes to the same remote task, which continues. `Decision.deny` cancels the
 *   remote task; the run goes on with the refusal.
 * - **Failures** are `ModelError`s (never retried) whose `cause` is the `A2aError`; interrupting the
 *   run, or `timeoutMs` passing, aborts the request and cancels the remote task.
 */
import { type AgentCard, type Message, Role, type Task } from "@a2a-js/sdk"
import type { Client } from "@a2a-js/sdk/client"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import { agentFactory } from "../../dsl/agent.ts"
import { tool } from "../../dsl/tool.ts"
import { effectQueue, effectStream } from "../../internal/lazy-effect.ts"
import type { LlmMessage, LlmResponse, ModelRequest, ToolCall } from "../../model/messages.ts"
import type { ModelClient } from "../../model/model-client.ts"
import { ModelError } from "../../model/model-error.ts"
import type { ResponsePart } from "../../model/response-part.ts"
import { checkResumeAgent, resumeAgent, runAgent, streamAgent, streamResumeAgent } from "../../runtime/run-agent.ts"
import { type A2aAgentOptions, type A2aUpdate, connect, partsText, runRemoteTask, toA2aError, toolNameOf } from "./client.ts"
import { A2aError } from "./errors.ts"
import { textPart } from "./parts.ts"
import { remoteStateOf } from "./task-state.ts"

/** The arguments of the reply tool: the remote task that asked, its question, and (given by the human) the answer. */
const ReplyArgs = Schema.Struct({
  taskId: Schema.String,
  contextId: Schema.String,
  question: Schema.String,
  answer: Schema.optionalKey(Schema.String)
})

/** Options of {@link a2aRemoteAgent}. */
export interface A2aRemoteAgentOptions<Name extends string> extends Omit<A2aAgentOptions<Name, undefined, undefined>, "args" | "output"> {
  /** Turns of one run (each answer of the remote is one; each round of input two). Default 64. */
  readonly maxTurns?: number
}

/** The name of the tool through which a remote agent named `name` asks for input. */
export const replyToolName = (name: string): string => toolNameOf(`reply_to_${name}`)

const userMessage = (text: string, ids: { readonly taskId?: string; readonly contextId?: string } = {}): Message => ({
  messageId: crypto.randomUUID(),
  contextId: ids.contextId ?? "",
  taskId: ids.taskId ?? "",
  role: Role.ROLE_USER,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

/** The conversation before the latest user message, as lines of text (tool traffic left out). */
const conversationText = (messages: ReadonlyArray<LlmMessage>): string =>
  messages.flatMap((m) => (m.role === "user" || (m.role === "assistant" && m.content !== "") ? [`${m.role}: ${m.content}`] : [])).join("\n")

/** What a turn does: start a task with a message, continue a task with the human's answer, or report a refusal. */
type Turn =
  | { readonly _tag: "Send"; readonly message: Message; readonly taskId?: string }
  | { readonly _tag: "Refused"; readonly taskId: string; readonly text: string }

const turnOf = (request: ModelRequest, replyName: string): Turn => {
  const messages = request.messages
  const last = messages.at(-1)
  if (last?.role === "tool" && last.name === replyName) {
    const call = messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls ?? [] : [])).find((c) => c.id === last.toolCallId)
    const args = Schema.decodeUnknownOption(Schema.fromJsonString(ReplyArgs))(typeof call?.arguments === "string" ? call.arguments : JSON.stringify(call?.arguments ?? null))
    let answer: unknown = undefined
    try {
      answer = (JSON.parse(last.content) as { readonly answer?: unknown } | null)?.answer
    } catch {
      answer = undefined
    }
    if (args._tag === "Some" && typeof answer === "string") {
      return { _tag: "Send", message: userMessage(answer, args.value), taskId: args.value.taskId }
    }
    // The reply was denied (the tool never ran): the content says why.
    return { _tag: "Refused", taskId: args._tag === "Some" ? args.value.taskId : "", text: last.content }
  }
  let lastUser = messages.length - 1
  while (lastUser >= 0 && messages[lastUser]!.role !== "user") lastUser--
  const input = lastUser >= 0 ? messages[lastUser]!.content : ""
  const before = conversationText(messages.slice(0, Math.max(0, lastUser)))
  return { _tag: "Send", message: userMessage(before === "" ? input : `The conversation so far:\n${before}\n\nThe latest message:\n${input}`) }
}

/** The remote agent behind `client` as a model whose answers stream from the remote's task. */
const remoteModel = (client: Client, card: AgentCard, options: A2aRemoteAgentOptions<string>, replyName: string): ModelClient => {
  const agentName = card.name || "a2a agent"
  const timeoutMs = options.timeoutMs ?? 120_000
  const streaming = card.capabilities?.streaming === true
  const pollMs = options.pollMs ?? 250
  const modelError = (error: A2aError) => new ModelError({ provider: "a2a", reason: error.message, retryable: false, cause: error })
  const cancel = (taskId: string | undefined) =>
    Effect.promise(async () => {
      if (taskId === undefined || taskId === "") return
      await client.cancelTask({ tenant: "", id: taskId, metadata: undefined }, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined)
    })

  const stream = (request: ModelRequest): Stream.Stream<ResponsePart, ModelError> =>
    effectStream().callback<ResponsePart, ModelError>((queue: Queue.Queue<ResponsePart, ModelError | Cause.Done>) =>
      Effect.gen(function*() {
        const offer = (part: ResponsePart) => void effectQueue().offerUnsafe(queue, part)
        const turn = turnOf(request, replyName)
        if (turn._tag === "Refused") {
          yield* cancel(turn.taskId)
          offer({ _tag: "TextDelta", delta: `The remote agent "${agentName}" asked for input and got none: ${turn.text} Its task was canceled.` })
          offer({ _tag: "Finish", reason: "stop" })
          return yield* effectQueue().end(queue)
        }
        let streamedText = false
        const update = (u: A2aUpdate) => {
          try {
            options.onUpdate?.(u)
          } catch {
            // An observer never changes the call.
          }
          if (u._tag === "Artifact" && u.text !== "") {
            streamedText = true
            offer({ _tag: "TextDelta", delta: u.text })
          } else if (u._tag === "Status" && u.text !== "" && remoteStateOf(u.state) === "working") {
            offer({ _tag: "ReasoningDelta", delta: `${u.text}\n` })
          }
        }
        const taskId: { current: string | undefined } = { current: turn.taskId }
        const task: Task = yield* Effect.tryPromise({
          try: (signal) => runRemoteTask({ client, agentName, streaming, pollMs, update }, turn.message, signal, taskId),
          catch: (cause) => modelError(toA2aError(agentName, taskId.current)(cause))
        }).pipe(
          Effect.onInterrupt(() => cancel(taskId.current)),
          Effect.timeoutOrElse({
            duration: timeoutMs,
            orElse: () => Effect.andThen(cancel(taskId.current), Effect.fail(modelError(new A2aError({ agent: agentName, kind: "timeout", reason: `no final state within ${timeoutMs} ms`, taskId: taskId.current }))))
          })
        )
        const said = partsText(task.status?.message?.parts)
        const failed = (kind: A2aError["kind"], reason: string) => Effect.fail(modelError(new A2aError({ agent: agentName, kind, reason, taskId: task.id || undefined })))
        const usage = (task.metadata as { readonly usage?: { readonly inputTokens?: unknown; readonly outputTokens?: unknown } } | undefined)?.usage
        const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0)
        if (usage !== undefined) offer({ _tag: "Usage", usage: { inputTokens: count(usage.inputTokens), outputTokens: count(usage.outputTokens) } })
        switch (remoteStateOf(task.status?.state)) {
          case "Success": {
            if (!streamedText) {
              const parts = task.artifacts.length > 0 ? task.artifacts.flatMap((a) => a.parts) : task.status?.message?.parts ?? []
              offer({ _tag: "TextDelta", delta: partsText(parts) })
            }
            offer({ _tag: "Finish", reason: "stop" })
            break
          }
          case "Suspended": {
            const args = { taskId: task.id, contextId: task.contextId, question: said || "The remote agent needs input to go on." }
            offer({ _tag: "ToolCallStart", index: 0, id: `${replyName}-${task.id}-${request.messages.length}`, name: replyName })
            offer({ _tag: "ToolCallDelta", index: 0, delta: JSON.stringify(args) })
            offer({ _tag: "ToolCallEnd", index: 0 })
            offer({ _tag: "Finish", reason: "tool-calls" })
            break
          }
          case "Failure":
            return yield* failed("task-failed", said || "the remote task failed")
          case "Rejected":
            return yield* failed("task-rejected", said || "the remote agent rejected the task")
          case "Interrupted":
            return yield* failed("task-canceled", said || "the remote task was canceled")
          case "AuthRequired":
            return yield* failed("auth-required", said || "the remote task waits for authentication")
          case "working":
            return yield* failed("transport", "the task did not settle")
        }
        return yield* effectQueue().end(queue)
      }), { bufferSize: 65_536, strategy: "suspend" })

  /** The whole answer, for runs that do not stream. */
  const chat = (request: ModelRequest): Effect.Effect<LlmResponse, ModelError> =>
    Effect.map(effectStream().runCollect(stream(request)), (chunk) => {
      let content = ""
      const calls: Array<ToolCall> = []
      let usage: { readonly inputTokens: number; readonly outputTokens: number } | undefined
      for (const part of chunk) {
        if (part._tag === "TextDelta") content += part.delta
        else if (part._tag === "ToolCallStart") calls.push({ id: part.id ?? replyName, name: part.name, arguments: "" })
        else if (part._tag === "ToolCallDelta") calls[part.index] = { ...calls[part.index]!, arguments: `${String(calls[part.index]!.arguments)}${part.delta}` }
        else if (part._tag === "Usage") usage = part.usage
      }
      const meta = usage === undefined ? {} : { usage }
      return calls.length > 0 ? { _tag: "ToolCalls", calls, ...(content === "" ? {} : { content }), ...meta } : { _tag: "Text", content, ...meta }
    })
  return { chat, stream, metadata: { provider: "a2a", model: agentName } }
}

/**
 * Reads the card at `url` and gives the remote agent as an agent of ours: a handoff target
 * (`skill(...).handoffs(remote)`, which sends it the conversation), a composite member, or a tool
 * (`remote.asTool(...)`) whose remote may ask for input, which suspends the calling run.
 *
 * @example
 * ```ts
 * const billing = await a2aRemoteAgent("http://127.0.0.1:4300", { name: "billing" })
 * const triage = agent("triage").model(m).skills(() => [skill("route", "Route").handoffs(billing)])
 * const result = await triage.run("refund order 7") // Suspended when billing asks a question
 * if (result._tag === "Suspended") await triage.resume(result.snapshot, { [result.pending[0]!.id]: Decision.edit({ ...result.pending[0]!.args as object, answer: "yes" }) })
 * ```
 */
export const a2aRemoteAgent = async <const Name extends string = string>(url: string, options: A2aRemoteAgentOptions<Name> = {}) => {
  const { client, card } = await connect(url, options)
  const name = (options.name ?? toolNameOf(card.name || "a2a agent")) as Name
  const replyName = replyToolName(name) as `reply_to_${Name}`
  const reply = tool(replyName, {
    description: `Answer the remote agent "${card.name}" when its task asks for input (a human gives the answer)`,
    args: ReplyArgs,
    needsApproval: true,
    run: ({ answer }) => JSON.stringify({ answer: answer ?? "approve" })
  })
  const base = remoteAgentFactory(name)
    .prompt(options.description ?? (card.description || `The remote A2A agent "${card.name}"`))
    .model(remoteModel(client, card, options, replyName))
  type Tools = { readonly [K in `reply_to_${Name}`]: typeof reply }
  // The key is the tool's own name; the builder's check cannot see it through the generic name.
  const withReply = (base as unknown as { tools(tools: Tools): ReturnType<typeof base.tools<Tools>> }).tools({ [replyName]: reply } as Tools)
  return withReply.budget({ maxTurns: options.maxTurns ?? 64 })
}

/** `agent(...)` as the package entry makes it (that entry sits above this layer). */
const remoteAgentFactory = agentFactory(runAgent, streamAgent, resumeAgent, { checkResume: checkResumeAgent, resumeStream: streamResumeAgent })
