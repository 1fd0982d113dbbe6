/**
 * What `useChat` sends, as a run's input: the transcript of the conversation in the provider-neutral
 * messages the loop speaks (`LlmMessage[]`), the latest user text, the files the user attached, and
 * the approval responses of the last assistant message as typed decisions for `resume`.
 *
 * The mapping, message by message:
 * - a user message: its text parts joined with a newline (files go to `files`, not to the model);
 * - an assistant message: one assistant message per step (`step-start` separates them) with the step's
 *   text and the tool calls that have an outcome, each followed by its tool result: `output-available`
 *   as the loop sends a result (strings as they are, anything else as JSON), `output-error` as its error
 *   text, `output-denied` as the loop's denial text. Calls without an outcome (`input-*`,
 *   `approval-requested`, `approval-responded`) are left out: they never ran, and a call without a
 *   result must not reach a model. Parts the UI message stream marks as a child run's (an agent called
 *   as a tool: its text and its own calls) are left out; the parent's call and its result stay;
 * - a system message is refused (set the system prompt on the server, with `.prompt(...)`).
 * The transcript is what the client says happened: treat it as the user's words, never as proof that a
 * tool ran (keep the conversation on the server with `session` when that matters).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Decision, type Decisions } from "../dsl/decision.ts"
import type { LlmMessage, ToolCall } from "../model/messages.ts"
import { deniedContent } from "../runtime/approval.ts"
import { childRunKey } from "../runtime/child-run-mark.ts"
import { toolResultContent } from "../runtime/prompt.ts"
import { UIMessagesInvalid } from "./errors.ts"
import { type DecodedUIMessage, type DecodedUIPart, defaultLimits, uiMessageBody, type UIMessageLimits, type UnknownParts } from "./ui-message-schema.ts"

/** Options of {@link fromUIMessages}. */
export interface FromUIMessagesOptions extends UIMessageLimits {
  /** Parts of a kind the AI SDK does not document: refused (default) or ignored. */
  readonly unknownParts?: UnknownParts
}

/**
 * A user's answer to a tool call that asked for approval (`state: "approval-responded"`, AI SDK 6 and
 * 7). `toolCallId` is the call's id as the UI stream sent it; `approvalId` the id of the approval
 * request.
 */
export interface ApprovalResponse {
  readonly toolCallId: string
  readonly approvalId: string
  readonly tool: string
  readonly approved: boolean
  readonly reason?: string
  /** The arguments the user saw. */
  readonly input: unknown
}

/** A file the user attached (a hosted URL or a data URL); the model does not see it. */
export interface UIFile {
  readonly messageIndex: number
  readonly mediaType: string
  readonly url: string
  readonly filename?: string
}

/** A chat request as a run's input. */
export interface ChatInput {
  /** The conversation before the latest user message, without system messages. */
  readonly transcript: ReadonlyArray<LlmMessage>
  /**
   * The latest user message's text, when the last message is the user's; `undefined` when it is the
   * assistant's (the client sent approval responses, or asked to continue).
   */
  readonly input: string | undefined
  /** The approval responses of the last message, when it is the assistant's. */
  readonly approvals: ReadonlyArray<ApprovalResponse>
  /** The files attached to user messages, in order. */
  readonly files: ReadonlyArray<UIFile>
  /** The chat's id and the trigger, when the body is the default transport's `{ id, messages, trigger }`. */
  readonly chatId?: string
  readonly trigger?: string
}

const maxIssues = 2_000

const invalid = (issues: string) => new UIMessagesInvalid({ issues: issues.length > maxIssues ? `${issues.slice(0, maxIssues)}…` : issues })

/** The tool's name of a tool part, or undefined for other parts. */
const toolName = (part: DecodedUIPart): string | undefined =>
  part.type === "dynamic-tool" && "toolName" in part ? part.toolName : part.type.startsWith("tool-") ? part.type.slice(5) : undefined

type ToolPart = Extract<DecodedUIPart, { readonly toolCallId: string }>
const isToolPart = (part: DecodedUIPart): part is ToolPart => "toolCallId" in part && "state" in part

/** The tool result a settled call is sent back as, or undefined for a call without an outcome. */
const resultOf = (name: string, part: ToolPart): string | undefined => {
  switch (part.state) {
    case "output-available":
      return toolResultContent(part.output ?? null)
    case "output-error":
      return part.errorText ?? "Error"
    case "output-denied":
      return deniedContent(name, part.approval?.reason ?? "denied by the user")
    default:
      return undefined
  }
}

const textOf = (parts: ReadonlyArray<DecodedUIPart>): string =>
  parts.flatMap((p) => (p.type === "text" && "text" in p ? [p.text] : [])).join("\n")

/**
 * Whether `part` is a child run's (an agent called as a tool), as the UI message stream marks it
 * (`providerMetadata` of a text, `toolMetadata` of a tool part, under `childRunKey`): the parent's
 * transcript leaves it out. The call's own outcome (its tool part in the parent's step) stays.
 */
const isChildRunPart = (part: DecodedUIPart): boolean => {
  const holder = "providerMetadata" in part ? part.providerMetadata : "toolMetadata" in part ? part.toolMetadata : undefined
  if (typeof holder !== "object" || holder === null || !Object.hasOwn(holder, childRunKey)) return false
  const mark = (holder as Record<string, unknown>)[childRunKey]
  return typeof mark === "object" && mark !== null && typeof (mark as { childRun?: unknown }).childRun === "string"
}

/** An assistant message as the loop's messages: one assistant message per step, with its results. */
const assistantMessages = (parts: ReadonlyArray<DecodedUIPart>): Array<LlmMessage> => {
  const steps: Array<Array<DecodedUIPart>> = [[]]
  for (const part of parts) {
    if (part.type === "step-start") steps.push([])
    else if (!isChildRunPart(part)) steps[steps.length - 1]!.push(part)
  }
  return steps.flatMap((step) => {
    const content = textOf(step)
    const calls: Array<ToolCall> = []
    const results: Array<LlmMessage> = []
    for (const part of step) {
      const name = toolName(part)
      if (name === undefined || !isToolPart(part)) continue
      const result = resultOf(name, part)
      if (result === undefined) continue
      calls.push({ id: part.toolCallId, name, arguments: JSON.stringify(part.input ?? {}) })
      results.push({ role: "tool", toolCallId: part.toolCallId, name, content: result })
    }
    if (content === "" && calls.length === 0) return []
    const assistant: LlmMessage = calls.length === 0 ? { role: "assistant", content } : { role: "assistant", content, toolCalls: calls }
    return [assistant, ...results]
  })
}

const approvalsOf = (message: DecodedUIMessage): Array<ApprovalResponse> =>
  message.parts.flatMap((part) => {
    const name = toolName(part)
    if (name === undefined || !isToolPart(part) || part.state !== "approval-responded" || part.approval?.approved === undefined) return []
    const { id, approved, reason } = part.approval
    const response: ApprovalResponse = { toolCallId: part.toolCallId, approvalId: id, tool: name, approved, input: part.input ?? null }
    return [reason === undefined ? response : { ...response, reason }]
  })

const toChatInput = (messages: ReadonlyArray<DecodedUIMessage>, meta: { readonly chatId?: string; readonly trigger?: string }): ChatInput => {
  const system = messages.findIndex((m) => m.role === "system")
  if (system !== -1) throw invalid(`a system message came from the client\n  at [${system}]: set the system prompt on the server with .prompt(...)`)
  const last = messages.at(-1)
  const userLast = last?.role === "user"
  const transcript: Array<LlmMessage> = []
  const files: Array<UIFile> = []
  messages.forEach((message, index) => {
    for (const part of message.parts) {
      if (part.type === "file" && "url" in part && message.role === "user") {
        files.push(part.filename === undefined ? { messageIndex: index, mediaType: part.mediaType, url: part.url } : { messageIndex: index, mediaType: part.mediaType, url: part.url, filename: part.filename })
      }
    }
    if (userLast && index === messages.length - 1) return
    if (message.role === "user") {
      const content = textOf(message.parts)
      if (content !== "") transcript.push({ role: "user", content })
    } else {
      transcript.push(...assistantMessages(message.parts))
    }
  })
  return {
    transcript,
    input: userLast ? textOf(last.parts) : undefined,
    approvals: last?.role === "assistant" ? approvalsOf(last) : [],
    files,
    ...meta
  }
}

/**
 * Decodes a chat request body (the `UIMessage[]` that `useChat` sends, or its default transport's
 * `{ id, messages, trigger }`) into a run's input; fails with `UIMessagesInvalid` for anything else.
 *
 * @example
 * ```ts
 * const chat = yield* decodeUIMessages(await request.json())
 * const answer = yield* session.sendEffect(chat.input ?? "")
 * ```
 */
export const decodeUIMessages = (body: unknown, options: FromUIMessagesOptions = {}): Effect.Effect<ChatInput, UIMessagesInvalid> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(fromUIMessages(body, options))
    } catch (error) {
      return Effect.fail(error instanceof UIMessagesInvalid ? error : invalid(String(error)))
    }
  })

/**
 * {@link decodeUIMessages} for Promise code: the run's input, or a thrown `UIMessagesInvalid`.
 *
 * @example
 * ```ts
 * export async function POST(req: Request) {
 *   const { transcript, input } = fromUIMessages(await req.json())
 *   // ...
 * }
 * ```
 */
export const fromUIMessages = (body: unknown, options: FromUIMessagesOptions = {}): ChatInput => {
  const limits = {
    maxMessages: options.maxMessages ?? defaultLimits.maxMessages,
    maxParts: options.maxParts ?? defaultLimits.maxParts,
    maxStringLength: options.maxStringLength ?? defaultLimits.maxStringLength
  }
  // A list far over the limit is refused before its elements are decoded one by one.
  const list = Array.isArray(body) ? body : typeof body === "object" && body !== null && Array.isArray((body as { messages?: unknown }).messages) ? (body as { messages: Array<unknown> }).messages : undefined
  if (list !== undefined && list.length > limits.maxMessages) throw invalid(`Expected at most ${limits.maxMessages} messages, got ${list.length}`)
  let decoded: ReturnType<ReturnType<typeof Schema.decodeUnknownResult<ReturnType<typeof uiMessageBody>>>>
  try {
    decoded = Schema.decodeUnknownResult(uiMessageBody(limits, options.unknownParts ?? "refuse"))(body, { errors: "all" })
  } catch (error) {
    throw invalid(`the body could not be read: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (Result.isFailure(decoded)) throw invalid(decoded.failure.message)
  const value = decoded.success
  try {
    if (Array.isArray(value)) return toChatInput(value as ReadonlyArray<DecodedUIMessage>, {})
    const { messages, id, trigger } = value as { readonly messages: ReadonlyArray<DecodedUIMessage>; readonly id?: string; readonly trigger?: string }
    return toChatInput(messages, { ...(id === undefined ? {} : { chatId: id }), ...(trigger === undefined ? {} : { trigger }) })
  } catch (error) {
    if (error instanceof UIMessagesInvalid) throw error
    throw invalid(`the body could not be read: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * The approval responses as the decisions of a stored suspension (what `chatHandler`'s
 * `loadSuspended` gives): each response must name, by its `approvalId` (`<run id>:<decision key>`, as
 * the UI message stream sent it), a call that suspension waits on, and every waiting call must be
 * answered; otherwise `UIMessagesInvalid`. Approved → `Decision.approve`, refused → `Decision.deny`.
 *
 * @example
 * ```ts
 * const decisions = approvalDecisions(fromUIMessages(body).approvals, await store.get(chatId))
 * ```
 */
export const approvalDecisions = (approvals: ReadonlyArray<ApprovalResponse>, suspension: { readonly snapshot: unknown; readonly pending: ReadonlyArray<{ readonly id: string }> }): Decisions => {
  const runId = (suspension.snapshot as { readonly state?: { readonly runId?: unknown } } | null)?.state?.runId
  if (typeof runId !== "string") throw invalid("the stored suspension has no snapshot with a run id")
  const waiting = new Set(suspension.pending.map((p) => p.id))
  const decisions: Record<string, Decision> = {}
  for (const approval of approvals) {
    const prefix = `${runId}:`
    const key = approval.approvalId.startsWith(prefix) ? approval.approvalId.slice(prefix.length) : undefined
    if (key === undefined || !waiting.has(key)) {
      throw invalid(`the approval "${approval.approvalId}" (tool call "${approval.toolCallId}") is not one the waiting run "${runId}" asked for`)
    }
    if (Object.hasOwn(decisions, key)) throw invalid(`the call "${key}" is answered twice`)
    decisions[key] = approval.approved ? Decision.approve : Decision.deny(approval.reason ?? "denied by the user")
  }
  const missing = [...waiting].filter((id) => !Object.hasOwn(decisions, id))
  if (missing.length > 0) throw invalid(`the run waits for an answer on ${missing.map((id) => `"${id}"`).join(", ")} too`)
  return decisions
}

/**
 * The approval responses as decisions for `agent.resume(snapshot, decisions)`, keyed by the waiting
 * call's decision key: the tool call id of the run's own call; for a call of a child run or a handoff's
 * target (whose UI part has an id of its own, `<run id>-<call id>`), the key its `approvalId` carries
 * (`<run id>:<decision key>`, read after the first `:`: run ids this package makes have none; with run
 * ids of your own, use `approvalDecisions`). Approved → `Decision.approve`, refused →
 * `Decision.deny(reason)` (the user's reason, else "denied by the user"). The AI SDK has no edit;
 * `Decision.edit` stays a server-side choice.
 *
 * @example
 * ```ts
 * const { approvals } = fromUIMessages(await req.json())
 * const result = await Effect.runPromise(teller.resume(await loadSnapshot(chatId), toDecisions(approvals)))
 * ```
 */
export const toDecisions = (approvals: ReadonlyArray<ApprovalResponse>): Decisions =>
  Object.fromEntries(approvals.map((a) => [decisionKeyOf(a), a.approved ? Decision.approve : Decision.deny(a.reason ?? "denied by the user")]))

/** The decision key of an approval response: its call's id when the `approvalId` names it, else what the `approvalId` carries after its run id. */
const decisionKeyOf = (approval: ApprovalResponse): string =>
  approval.approvalId.endsWith(`:${approval.toolCallId}`) || !approval.approvalId.includes(":")
    ? approval.toolCallId
    : approval.approvalId.slice(approval.approvalId.indexOf(":") + 1)
