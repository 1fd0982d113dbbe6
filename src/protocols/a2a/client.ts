/**
 * A remote A2A agent as a tool of ours: `a2aAgent(url)` reads the Agent Card (A2A 1.0, or a 0.3 card
 * through the SDK's compatibility layer) and gives a `Tool` the model can call. By default the tool
 * takes `{ input: string }`, sends it as a text part and answers the remote's text; with `args` and
 * `output` Schemas it sends the decoded arguments as a data part and decodes the answer with `output`.
 *
 * Each call is one remote task. It streams when the card says so (every status and artifact update, as
 * it arrives, is a `ToolProgress` event of the calling run for its hooks and streams, and reaches
 * `onUpdate`), else sends a blocking request and polls `GetTask` until the task
 * settles. Failures are `A2aError`s with a `kind` (the run's recovery handlers see them as the tool's
 * failure): a failed, rejected or canceled task, a transport or protocol error, a stream that ends
 * before a final state, a task waiting for input or authentication, or no answer within `timeoutMs`
 * (for a remote that asks questions, `a2aRemoteAgent(url).asTool(...)` suspends the calling run instead).
 * When our call is interrupted (the run is interrupted, its wall-time budget ends, `timeoutMs`
 * passes) the request is aborted and the remote task is sent `CancelTask`. Token usage the remote
 * reports in its final status (`metadata.usage: { inputTokens, outputTokens }`, as `serveA2a` does)
 * is charged to the calling run's budget.
 */
import { type AgentCard, type Message, type Part, Role, type Task, type TaskState } from "@a2a-js/sdk"
import { type Client, ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } from "@a2a-js/sdk/client"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AgentConfigError } from "../../errors.ts"
import { CurrentBudgetScope } from "../../dsl/lineage.ts"
import { type Tool, tool, type ToolContext } from "../../dsl/tool.ts"
import type { ArgsSchema } from "../../dsl/tool-parameters.ts"
import { describeCause } from "../../internal/describe-cause.ts"
import { A2aError } from "./errors.ts"
import { dataPart, textPart } from "./parts.ts"
import { remoteStateOf } from "./task-state.ts"

/** A status or artifact update of the remote task, as `onUpdate` sees it. */
export type A2aUpdate =
  | { readonly _tag: "Status"; readonly taskId: string; readonly state: TaskState; readonly text: string }
  | { readonly _tag: "Artifact"; readonly taskId: string; readonly name: string; readonly text: string }

/** Options of {@link a2aAgent}. */
export interface A2aAgentOptions<Name extends string, S extends ArgsSchema | undefined, O extends Schema.Top | undefined> {
  /** The tool's name (default: the card's name made a valid tool name). */
  readonly name?: Name
  /** Default: the card's description. */
  readonly description?: string
  /** The arguments, sent as one data part (default `{ input: string }`, sent as text). */
  readonly args?: S
  /** Decodes the answer (its data part, or its text as JSON); default: the answer's text. */
  readonly output?: O
  /** Milliseconds a call may take before it fails with `kind: "timeout"` and the task is canceled (default 120 000). */
  readonly timeoutMs?: number
  /** Headers on every request (say `{ authorization: "Bearer ..." }`). */
  readonly headers?: Readonly<Record<string, string>>
  /** Sees each update of the remote task as it streams. A throwing callback is ignored. */
  readonly onUpdate?: (update: A2aUpdate) => void
  /** Milliseconds reading the card may take (default 10 000): a server that never answers is an `A2aError` of kind `card`. */
  readonly cardTimeoutMs?: number
  /** Where the card is, under the URL (default: the well-known path). */
  readonly cardPath?: string
  /** Milliseconds between `GetTask` polls when the remote does not stream (default 250). */
  readonly pollMs?: number
}

type ArgsOf<S> = S extends ArgsSchema ? S["Type"] : { readonly input: string }
type OutputOf<O> = O extends Schema.Top ? O["Type"] : string

const DefaultArgs = Schema.Struct({ input: Schema.String.annotate({ description: "What to ask the remote agent" }) })

/** The card's name as a tool name: letters, digits, `_` and `-`, at most 64 characters. */
export const toolNameOf = (name: string): string => (name.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 64) || "a2a_agent")

export const partsText = (parts: ReadonlyArray<Part> | undefined): string =>
  (parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : p.content?.$case === "data" ? JSON.stringify(p.content.value) : "")).join("")

/** A2A error names of the SDK, as protocol codes (for errors that do not carry the server's own code). */
const protocolCodes: Readonly<Record<string, number>> = {
  TaskNotFoundError: -32001,
  TaskNotCancelableError: -32002,
  PushNotificationNotSupportedError: -32003,
  UnsupportedOperationError: -32004,
  ContentTypeNotSupportedError: -32005,
  InvalidAgentResponseError: -32006,
  ExtendedAgentCardNotConfiguredError: -32007,
  ExtensionSupportRequiredError: -32008,
  VersionNotSupportedError: -32009,
  RequestMalformedError: -32602
}

/**
 * A thrown value of the SDK or of fetch as an `A2aError`. An error the server answered (a JSON-RPC
 * error: the SDK keeps its code as `envelopeCode`) is a `protocol` error with the server's own code,
 * whatever SDK class it came as (the SDK reads -32600 and -32601 as its `RequestMalformedError`, and
 * codes it has no class for, -32603 included, as a transport error).
 */
export const toA2aError = (agent: string, taskId: string | undefined) => (cause: unknown): A2aError => {
  if (cause instanceof A2aError) return cause
  const { name, envelopeCode } = (typeof cause === "object" && cause !== null ? cause : {}) as { readonly name?: unknown; readonly envelopeCode?: unknown }
  const code = typeof envelopeCode === "number" && Number.isInteger(envelopeCode) ? envelopeCode : typeof name === "string" ? protocolCodes[name] : undefined
  return new A2aError({ agent, kind: code === undefined ? "transport" : "protocol", reason: describeCause(cause), taskId, code, cause })
}

/**
 * Reads the card at `url` and gives the remote agent as a tool.
 *
 * @example
 * ```ts
 * const research = await a2aAgent("http://127.0.0.1:4100", { name: "research", timeoutMs: 60_000 })
 * const lead = agent("lead").model(openai("gpt-4.1-mini")).tools({ research })
 * ```
 */
export const a2aAgent = async <const Name extends string = string, S extends ArgsSchema | undefined = undefined, O extends Schema.Top | undefined = undefined>(
  url: string,
  options: A2aAgentOptions<Name, S, O> = {}
): Promise<Tool<Name, ArgsOf<S>, OutputOf<O>>> => {
  const { client, card } = await connect(url, options)
  return a2aTool(client, card, options)
}

/** Reads the card at `url` and makes an SDK client for it (JSON-RPC or REST, 1.0 or 0.3). */
export const connect = async (url: string, options: A2aAgentOptions<string, any, any>): Promise<{ readonly client: Client; readonly card: AgentCard }> => {
  const headers = options.headers ?? {}
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...headers } })
  let card: AgentCard
  try {
    const cardSignal = AbortSignal.timeout(options.cardTimeoutMs ?? 10_000)
    const cardFetch: typeof fetch = (input, init) => fetchImpl(input, { ...init, signal: cardSignal })
    card = await new DefaultAgentCardResolver({ fetchImpl: cardFetch, legacyCompat: { enabled: true } }).resolve(url, options.cardPath)
  } catch (cause) {
    throw new A2aError({ agent: url, kind: "card", reason: describeCause(cause), cause })
  }
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }), new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })]
  })
  let client: Client
  try {
    client = await factory.createFromAgentCard(card)
  } catch (cause) {
    throw new A2aError({ agent: card.name || url, kind: "card", reason: describeCause(cause), cause })
  }
  return { client, card }
}

/**
 * The tool over an SDK `Client` and the card it was made from (what `a2aAgent` returns once it has both).
 *
 * @example
 * ```ts
 * const remote = a2aTool(await new ClientFactory().createFromUrl(url), card, { name: "remote" })
 * ```
 */
export const a2aTool = <const Name extends string = string, S extends ArgsSchema | undefined = undefined, O extends Schema.Top | undefined = undefined>(
  client: Client,
  card: AgentCard,
  options: A2aAgentOptions<Name, S, O> = {}
): Tool<Name, ArgsOf<S>, OutputOf<O>> => {
  const call = remoteCaller(client, card, options)
  const name = (options.name ?? toolNameOf(card.name || "a2a agent")) as Name
  return tool(name, {
    description: options.description ?? (card.description || `The remote A2A agent "${card.name}"`),
    args: (options.args ?? DefaultArgs) as ArgsSchema,
    untrustedOutput: true,
    run: (args: unknown, context: ToolContext) => call(args, context.progress)
  }) as unknown as Tool<Name, ArgsOf<S>, OutputOf<O>>
}

/**
 * Runs one task of the remote to a settled state (streamed when the card says so, else sent and
 * polled); `taskId.current` is known as soon as the remote names it; `update` sees every update.
 */
export const runRemoteTask = async (
  remote: { readonly client: Client; readonly agentName: string; readonly streaming: boolean; readonly pollMs: number; readonly update: (u: A2aUpdate) => void },
  message: Message,
  signal: AbortSignal,
  taskId: { current: string | undefined }
): Promise<Task> => {
  const { client, agentName, streaming, pollMs, update } = remote
  const request = { tenant: "", message, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false }, metadata: undefined }
  if (streaming) {
    let task: Task | undefined
    for await (const event of client.sendMessageStream(request, { signal })) {
      const payload = event.payload
      if (payload === undefined) continue
      if (payload.$case === "message") {
        // A direct answer without a task: a completed exchange.
        return { id: "", contextId: payload.value.contextId, status: { state: 3, message: payload.value, timestamp: undefined }, artifacts: [], history: [], metadata: undefined }
      }
      if (payload.$case === "task") {
        task = { ...payload.value, artifacts: [...payload.value.artifacts] }
        taskId.current = task.id
      } else if (payload.$case === "statusUpdate") {
        const value = payload.value
        taskId.current = value.taskId
        task = task ?? { id: value.taskId, contextId: value.contextId, status: undefined, artifacts: [], history: [], metadata: undefined }
        task = { ...task, status: value.status, metadata: { ...task.metadata, ...value.metadata } }
        update({ _tag: "Status", taskId: value.taskId, state: value.status?.state ?? 0, text: partsText(value.status?.message?.parts) })
      } else if (payload.$case === "artifactUpdate") {
        const value = payload.value
        const artifact = value.artifact
        if (artifact === undefined) continue
        task = task ?? { id: value.taskId, contextId: value.contextId, status: undefined, artifacts: [], history: [], metadata: undefined }
        const existing = task.artifacts.find((a) => a.artifactId === artifact.artifactId)
        const artifacts = value.append && existing !== undefined
          ? task.artifacts.map((a) => (a === existing ? { ...a, parts: [...a.parts, ...artifact.parts] } : a))
          : [...task.artifacts.filter((a) => a.artifactId !== artifact.artifactId), artifact]
        task = { ...task, artifacts }
        update({ _tag: "Artifact", taskId: value.taskId, name: artifact.name, text: partsText(artifact.parts) })
      }
      if (task !== undefined && remoteStateOf(task.status?.state) !== "working") return task
    }
    throw new A2aError({ agent: agentName, kind: "transport", reason: "the stream ended before the task reached a final state", taskId: taskId.current })
  }
  const result = await client.sendMessage(request, { signal })
  if ("messageId" in result) {
    return { id: "", contextId: result.contextId, status: { state: 3, message: result, timestamp: undefined }, artifacts: [], history: [], metadata: undefined }
  }
  let task: Task = result
  taskId.current = task.id
  while (remoteStateOf(task.status?.state) === "working") {
    await pause(pollMs, signal)
    // A signal of its own for each poll: what the SDK and fetch hang on it goes with it.
    task = await client.getTask({ tenant: "", id: task.id }, { signal: AbortSignal.any([signal]) })
    update({ _tag: "Status", taskId: task.id, state: task.status?.state ?? 0, text: partsText(task.status?.message?.parts) })
  }
  return task
}

/**
 * Waits `ms`, or rejects when `signal` aborts; its abort listener goes when the wait ends, so a task
 * polled for a long time does not pile listeners on one signal.
 */
const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => (clearTimeout(timer), reject(signal.reason))
    const timer = setTimeout(() => (signal.removeEventListener("abort", onAbort), resolve()), ms)
    signal.addEventListener("abort", onAbort, { once: true })
  })

/** One call of the remote agent as an Effect: a task run to its settled state, its answer or an `A2aError`. */
const remoteCaller = (
  client: Client,
  card: AgentCard,
  options: A2aAgentOptions<string, any, any>
): (args: unknown, progress?: (update: A2aUpdate) => void) => Effect.Effect<unknown, A2aError> => {
  const agentName = card.name || "a2a agent"
  const timeoutMs = options.timeoutMs ?? 120_000
  if (!(timeoutMs > 0)) throw new AgentConfigError({ subject: `a2aAgent("${agentName}")`, reason: "timeoutMs must be a positive number of milliseconds" })
  const pollMs = options.pollMs ?? 250
  const streaming = card.capabilities?.streaming === true
  const update = (u: A2aUpdate) => {
    try {
      options.onUpdate?.(u)
    } catch {
      // An observer never changes the call.
    }
  }

  /** The answer of a settled task, or the error its state means. */
  const settle = (task: Task): Effect.Effect<unknown, A2aError> => {
    const state = remoteStateOf(task.status?.state)
    const said = partsText(task.status?.message?.parts)
    const fail = (kind: A2aError["kind"], reason: string) => Effect.fail(new A2aError({ agent: agentName, kind, reason, taskId: task.id || undefined }))
    switch (state) {
      case "Failure":
        return fail("task-failed", said || "the remote task failed")
      case "Rejected":
        return fail("task-rejected", said || "the remote agent rejected the task")
      case "Interrupted":
        return fail("task-canceled", said || "the remote task was canceled")
      case "Suspended":
        return fail("input-required", said || "the remote task waits for input")
      case "AuthRequired":
        return fail("auth-required", said || "the remote task waits for authentication")
      case "working":
        return fail("transport", "the task did not settle")
      case "Success":
        break
    }
    const parts = task.artifacts.length > 0 ? task.artifacts.flatMap((a) => a.parts) : task.status?.message?.parts ?? []
    if (options.output === undefined) return Effect.succeed(partsText(parts))
    const data = parts.find((p) => p.content?.$case === "data")
    let candidate: unknown = data?.content?.value
    if (data === undefined) {
      const text = partsText(parts)
      try {
        candidate = JSON.parse(text)
      } catch {
        candidate = text
      }
    }
    return Schema.decodeUnknownEffect(options.output as Schema.Codec<unknown, unknown>)(candidate, { errors: "all" }).pipe(
      Effect.mapError((issue) => new A2aError({ agent: agentName, kind: "invalid-output", reason: issue.message, taskId: task.id || undefined }))
    )
  }

  /** Charges the usage the remote reported to the calling run's budget. */
  const charge = (task: Task) =>
    Effect.gen(function*() {
      const usage = (task.metadata as { readonly usage?: { readonly inputTokens?: unknown; readonly outputTokens?: unknown } } | undefined)?.usage
      const tokens = [usage?.inputTokens, usage?.outputTokens].reduce<number>((sum, n) => sum + (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0), 0)
      const scope = yield* CurrentBudgetScope
      if (tokens > 0 && scope !== undefined) scope.charge("tokens", tokens)
    })

  // Each update reaches `onUpdate` and, as a `ToolProgress` event, the calling run's hooks and streams.
  const call = (args: unknown, progress?: (update: A2aUpdate) => void) =>
    Effect.gen(function*() {
      const report = progress === undefined ? update : (u: A2aUpdate) => (update(u), progress(u))
      const parts: Array<Part> = options.args === undefined ? [textPart(String((args as { readonly input: unknown }).input))] : [dataPart(args)]
      const message: Message = { messageId: crypto.randomUUID(), contextId: "", taskId: "", role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] }
      const taskId: { current: string | undefined } = { current: undefined }
      const cancelRemote = Effect.promise(async () => {
        if (taskId.current === undefined || taskId.current === "") return
        await client.cancelTask({ tenant: "", id: taskId.current, metadata: undefined }, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined)
      })
      const task = yield* Effect.tryPromise({ try: (signal) => runRemoteTask({ client, agentName, streaming, pollMs, update: report }, message, signal, taskId), catch: (cause) => toA2aError(agentName, taskId.current)(cause) }).pipe(
        Effect.onInterrupt(() => cancelRemote),
        Effect.timeoutOrElse({
          duration: timeoutMs,
          orElse: () => Effect.fail(new A2aError({ agent: agentName, kind: "timeout", reason: `no final state within ${timeoutMs} ms`, taskId: taskId.current }))
        })
      )
      yield* charge(task)
      return yield* settle(task)
    })
  return call
}
