/**
 * An AG-UI `RunAgentInput` (what `@ag-ui/client`'s `HttpAgent` and CopilotKit post) as a run's input:
 * its Schema (bounded; keys the run does not use are dropped) and its reading into the loop's
 * provider-neutral messages.
 *
 * The mapping:
 * - the conversation before the last message, when that one is the user's, becomes the transcript: user
 *   text (text parts joined with a newline; media parts are dropped), assistant text and the tool calls
 *   that have a result, each followed by its tool message (its `error` when it has no content). Calls
 *   without a result are left out: a call without a result must not reach a model;
 * - the last message, when it is the user's, is the run's input;
 * - when it is not (the client ran its own tools, or answers interrupts with `resume`), the input
 *   continues a waiting run: the tool messages are the client tools' results, by call id; `resume`
 *   entries with a last message of the user's are refused (the answers continue the stopped run, which
 *   has no place for a new message);
 * - system and developer messages are refused (the system prompt is the server's, `.prompt(...)`);
 *   activity and reasoning messages are the front end's and are ignored.
 * The transcript is what the client says happened: treat it as the user's words, never as proof that
 * a server tool ran.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { LlmMessage, ToolCall } from "../../model/messages.ts"
import { agUiInvalid } from "./errors.ts"
import type { AgUiInputMessage } from "./wire/ag-ui-event.ts"

/** Bounds on a `RunAgentInput`; over any of them it is refused with `AgUiInputInvalid`. */
export interface RunAgentInputLimits {
  /** Messages. Default 1,000. */
  readonly maxMessages?: number
  /** Client tools. Default 128. */
  readonly maxTools?: number
  /** Characters in one string. Default 1,000,000. */
  readonly maxStringLength?: number
}

const defaults: Required<RunAgentInputLimits> = { maxMessages: 1_000, maxTools: 128, maxStringLength: 1_000_000 }

const make = (limits: Required<RunAgentInputLimits>) => {
  const Text = Schema.String.check(Schema.isMaxLength(limits.maxStringLength))
  const Id = Schema.String.check(Schema.isMaxLength(1_000))
  const Part = Schema.Struct({ type: Id, text: Schema.optionalKey(Text) })
  const Content = Schema.Union([Text, Schema.Array(Part).check(Schema.isMaxLength(1_000))])
  const Call = Schema.Struct({ id: Id, type: Schema.optionalKey(Schema.Literal("function")), function: Schema.Struct({ name: Id, arguments: Text }) })
  const Message = Schema.Union([
    Schema.Struct({ id: Id, role: Schema.Literal("user"), content: Content }),
    Schema.Struct({
      id: Id,
      role: Schema.Literal("assistant"),
      content: Schema.optionalKey(Schema.NullOr(Text)),
      toolCalls: Schema.optionalKey(Schema.NullOr(Schema.Array(Call).check(Schema.isMaxLength(1_000))))
    }),
    Schema.Struct({ id: Id, role: Schema.Literal("tool"), toolCallId: Id, content: Content, error: Schema.optionalKey(Schema.NullOr(Text)) }),
    Schema.Struct({ id: Id, role: Schema.Literals(["system", "developer"]), content: Text }),
    Schema.Struct({ id: Id, role: Schema.Literals(["activity", "reasoning"]) })
  ])
  const ClientTool = Schema.Struct({ name: Id, description: Schema.optionalKey(Schema.NullOr(Text)), parameters: Schema.optionalKey(Schema.Unknown) })
  const Resume = Schema.Struct({ interruptId: Id, status: Schema.Literals(["resolved", "cancelled"]), payload: Schema.optionalKey(Schema.Unknown) })
  return Schema.Struct({
    threadId: Id,
    runId: Id,
    parentRunId: Schema.optionalKey(Schema.NullOr(Id)),
    protocolVersion: Schema.optionalKey(Schema.NullOr(Id)),
    state: Schema.optionalKey(Schema.Unknown),
    messages: Schema.Array(Message).check(Schema.isMaxLength(limits.maxMessages)),
    tools: Schema.optionalKey(Schema.NullOr(Schema.Array(ClientTool).check(Schema.isMaxLength(limits.maxTools)))),
    context: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Struct({ description: Text, value: Text })).check(Schema.isMaxLength(1_000)))),
    forwardedProps: Schema.optionalKey(Schema.Unknown),
    resume: Schema.optionalKey(Schema.NullOr(Schema.Array(Resume).check(Schema.isMaxLength(1_000))))
  })
}

type Decoded = ReturnType<typeof make>["Type"]
type DecodedMessage = Decoded["messages"][number]

/** A tool the client offers: it runs in the front end, never on the server. */
export interface ClientToolSpec {
  readonly name: string
  readonly description?: string
  /** Its arguments' JSON Schema, as the client sent it (`{ "type": "object" }` when absent). */
  readonly parameters: unknown
}

/**
 * An answer to an interrupt, from the input's `resume`. For a `tool_call` interrupt, `payload` is
 * `true`, `false` or `{ approved, reason?, editedArgs? }` (read by `resumeDecisions`); a cancelled one
 * refuses the call.
 *
 * @example
 * ```ts
 * const entry: ResumeEntry = { interruptId: "run-1:pay-1", status: "resolved", payload: { approved: true, editedArgs: { to: "bob", amount: 20 } } }
 * ```
 */
export interface ResumeEntry {
  readonly interruptId: string
  readonly status: "resolved" | "cancelled"
  readonly payload?: unknown
}

/** A `RunAgentInput` read as a run's input. */
export interface AgUiRunInput {
  readonly threadId: string
  readonly runId: string
  /** The conversation before the latest user message (empty when the input continues a waiting run). */
  readonly transcript: ReadonlyArray<LlmMessage>
  /** The latest user message's text; undefined when the input continues a waiting run. */
  readonly input: string | undefined
  /** The client tools' results the input carries, by tool call id. */
  readonly toolResults: ReadonlyMap<string, string>
  readonly resume: ReadonlyArray<ResumeEntry>
  readonly clientTools: ReadonlyArray<ClientToolSpec>
  /** The input's messages as the client sent them (validated), for the closing `MESSAGES_SNAPSHOT`. */
  readonly messages: ReadonlyArray<AgUiInputMessage>
  readonly state?: unknown
  readonly context: ReadonlyArray<{ readonly description: string; readonly value: string }>
  readonly forwardedProps?: unknown
}

const textOf = (content: string | ReadonlyArray<{ readonly type: string; readonly text?: string }>): string =>
  typeof content === "string" ? content : content.flatMap((p) => (p.type === "text" && p.text !== undefined ? [p.text] : [])).join("\n")

const toolContent = (message: Extract<DecodedMessage, { readonly role: "tool" }>): string => {
  const text = textOf(message.content)
  return text === "" && typeof message.error === "string" ? `Error: ${message.error}` : text
}

/** Messages as the loop's: every call kept has exactly one result, right after its assistant message. */
const transcriptOf = (messages: ReadonlyArray<DecodedMessage>): Array<LlmMessage> => {
  const results = new Map<string, string>()
  for (const message of messages) if (message.role === "tool") results.set(message.toolCallId, toolContent(message))
  const out: Array<LlmMessage> = []
  const answered = new Set<string>()
  messages.forEach((message, index) => {
    switch (message.role) {
      case "system":
      case "developer":
        throw agUiInvalid(`a ${message.role} message came from the client\n  at messages[${index}]: set the system prompt on the server with .prompt(...)`)
      case "user": {
        const content = textOf(message.content)
        if (content !== "") out.push({ role: "user", content })
        break
      }
      case "assistant": {
        // A call id answers once, in the first message that makes it: repeats are left out.
        const calls: Array<ToolCall> = []
        for (const c of message.toolCalls ?? []) {
          if (!results.has(c.id) || answered.has(c.id)) continue
          answered.add(c.id)
          calls.push({ id: c.id, name: c.function.name, arguments: c.function.arguments })
        }
        const content = message.content ?? ""
        if (content === "" && calls.length === 0) break
        out.push(calls.length === 0 ? { role: "assistant", content } : { role: "assistant", content, toolCalls: calls })
        for (const call of calls) {
          out.push({ role: "tool", toolCallId: call.id, name: call.name, content: results.get(call.id)! })
        }
        break
      }
      default:
        // Tool messages were placed after their calls; activity and reasoning are the front end's.
        break
    }
  })
  return out
}

/**
 * Reads a `RunAgentInput` (the parsed JSON body) as a run's input; throws `AgUiInputInvalid` for
 * anything else.
 *
 * @example
 * ```ts
 * const run = fromRunAgentInput(await request.json())
 * if (run.input !== undefined) assistant.runStream(run.input)
 * ```
 */
export const fromRunAgentInput = (body: unknown, limits: RunAgentInputLimits = {}): AgUiRunInput => {
  const bounds = { ...defaults, ...limits }
  const list = typeof body === "object" && body !== null ? (body as { readonly messages?: unknown }).messages : undefined
  if (Array.isArray(list) && list.length > bounds.maxMessages) throw agUiInvalid(`Expected at most ${bounds.maxMessages} messages, got ${list.length}`)
  let decoded: Result.Result<Decoded, Schema.SchemaError>
  try {
    decoded = Schema.decodeUnknownResult(make(bounds))(body, { errors: "all" })
  } catch (error) {
    throw agUiInvalid(`the body could not be read: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (Result.isFailure(decoded)) throw agUiInvalid(decoded.failure.message)
  const value = decoded.success
  const messages = value.messages
  const lastUser = messages.at(-1)?.role === "user"
  // Answers continue the stopped run where it stopped: a new user message there would be dropped, or
  // the answers would (a new run): refused, so the client learns which.
  if (lastUser && (value.resume ?? []).length > 0) {
    throw agUiInvalid("the input answers interrupts (resume) but ends with a new user message: send the answers without it (the conversation as the stopped run's MESSAGES_SNAPSHOT left it), then the new message in the next run")
  }
  let lastUserIndex = messages.length - 1
  while (lastUserIndex >= 0 && messages[lastUserIndex]!.role !== "user") lastUserIndex--
  const transcript = lastUser ? transcriptOf(messages.slice(0, -1)) : (transcriptOf(messages), [])
  const toolResults = new Map<string, string>()
  if (!lastUser) {
    for (const message of messages.slice(lastUserIndex + 1)) if (message.role === "tool") toolResults.set(message.toolCallId, toolContent(message))
  }
  const last = messages.at(-1)
  return {
    threadId: value.threadId,
    runId: value.runId,
    transcript,
    input: lastUser && last?.role === "user" ? textOf(last.content) : undefined,
    toolResults,
    resume: value.resume ?? [],
    messages: (body as { readonly messages: ReadonlyArray<AgUiInputMessage> }).messages,
    clientTools: (value.tools ?? []).map((t) => ({
      name: t.name,
      ...(typeof t.description === "string" ? { description: t.description } : {}),
      parameters: t.parameters ?? { type: "object", properties: {} }
    })),
    ...(value.state === undefined ? {} : { state: value.state }),
    context: value.context ?? [],
    ...(value.forwardedProps === undefined ? {} : { forwardedProps: value.forwardedProps })
  }
}
