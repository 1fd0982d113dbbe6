/**
 * A `useChat` endpoint as one Web-standard function, `(request: Request) => Promise<Response>`: what
 * Next.js route handlers, Hono, Deno, Bun and edge functions call, and what `nodeHandler` adapts to
 * Node's `http` and Express. It reads the body with a size limit, decodes it (`fromUIMessages`), runs
 * the agent on the latest user text after the conversation, and answers with the AI SDK's UI message
 * stream. A body that is not a chat answers 400 (413 over `maxBodyBytes`, 405 for another method)
 * with `{ error: { _tag, message } }`, before anything runs. A client that goes away (the body cancelled,
 * or only the request's `signal` aborted) stops the run. A run that suspends for approval ends its
 * stream with `tool-approval-request` chunks (`onSuspended` stores it); the client's answers (the
 * assistant message back with `approval-responded` parts) resume it (`loadSuspended`).
 */
import { type AgentBuilder, type AgentShape, definitionOf } from "../dsl/agent.ts"
import { eventStreamResponse } from "../runtime/event-stream-response.ts"
import { chatResumeStream, chatStream, type ChatStreamOptions, type ChatSuspension } from "./chat-stream.ts"
import { provideStreamingModules } from "./edge-modules.ts"
import { UIMessagesInvalid } from "./errors.ts"
import { approvalDecisions, type ChatInput, fromUIMessages, type FromUIMessagesOptions } from "./from-ui-messages.ts"

/** Options of {@link chatHandler}. */
export interface ChatHandlerOptions extends FromUIMessagesOptions, Omit<ChatStreamOptions, "onSuspended"> {
  /**
   * Stores a run that suspended for approvals before its end is streamed, with the chat it answers
   * (`chat.chatId`, the messages it was sent): what `loadSuspended` finds again when the answers come.
   *
   * @example
   * ```ts
   * onSuspended: (suspension, chat) => void waiting.set(chat.chatId ?? "", suspension)
   * ```
   */
  readonly onSuspended?: ((suspension: ChatSuspension, chat: ChatInput) => unknown) | undefined
  /**
   * The suspension a chat's approval answers continue: what `onSuspended` stored for this chat (by
   * `chat.chatId`, for instance), or undefined when none waits (answered 409). With it, a request whose
   * last message is the assistant's with approval responses resumes that run and streams the rest.
   */
  readonly loadSuspended?: (chat: ChatInput) => ChatSuspension | undefined | Promise<ChatSuspension | undefined>
  /** The largest body read, in bytes; a larger one answers 413. Default 4 MiB. */
  readonly maxBodyBytes?: number
  /** Extra headers on the streamed response. */
  readonly headers?: Record<string, string>
  /**
   * The text the client is shown for an error (the run's failure, a tool's), as the AI SDK's
   * `onError`. Default: the error's message.
   */
  readonly onError?: (error: unknown) => string
}

const defaultMaxBodyBytes = 4 * 1024 * 1024

export const errorResponse = (status: number, error: { readonly _tag: string; readonly message: string }): Response =>
  new Response(JSON.stringify({ error: { _tag: error._tag, message: error.message } }), {
    status,
    headers: { "content-type": "application/json; charset=utf-8" }
  })

class BodyTooLarge {
  readonly _tag = "BodyTooLarge"
  constructor(readonly limit: number) {}
  get message(): string {
    return `The request body is larger than ${this.limit} bytes`
  }
}

/**
 * The JSON body of a POST, or the Response that refuses the request: 405 for another method, 413 past
 * `limit` bytes, 400 (`invalid`'s error) for a body that is not JSON. Shared by the chat and AG-UI handlers.
 */
export const readJsonBody = async (
  request: Request,
  limit: number,
  endpoint: string,
  invalid: (issues: string) => { readonly _tag: string; readonly message: string }
): Promise<{ readonly body: unknown } | { readonly refused: Response }> => {
  if (request.method !== "POST") return { refused: errorResponse(405, { _tag: "MethodNotAllowed", message: `${endpoint} takes POST` }) }
  try {
    return { body: JSON.parse(await readText(request, limit)) }
  } catch (error) {
    if (error instanceof BodyTooLarge) return { refused: errorResponse(413, error) }
    return { refused: errorResponse(400, invalid(`the body is not JSON: ${error instanceof Error ? error.message : String(error)}`)) }
  }
}

/** The body as text, refusing it as soon as it passes `limit` bytes (a declared length is checked first). */
const readText = async (request: Request, limit: number): Promise<string> => {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN)
  if (declared > limit) throw new BodyTooLarge(limit)
  if (request.body === null) return ""
  const reader = request.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  while (true) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw new BodyTooLarge(limit)
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return new TextDecoder().decode(bytes)
}

/**
 * The `POST` handler of a `useChat` endpoint for `builder` (an agent whose input is the user's text).
 *
 * @example
 * ```ts
 * // app/api/chat/route.ts (Next.js App Router)
 * import { chatHandler } from "effect-agent-dsl/web"
 * const handle = chatHandler(assistant)
 * export async function POST(req: Request) {
 *   return handle(req)
 * }
 * ```
 */
export const chatHandler = <T extends AgentShape & { readonly input: string; readonly requirements: never }>(
  builder: AgentBuilder<T>,
  options: ChatHandlerOptions = {}
): ((request: Request) => Promise<Response>) => {
  // Not an agent (a plain JavaScript caller's mistake) is said now, not at every request.
  definitionOf(builder)
  provideStreamingModules()
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes
  return async (request) => {
    const read = await readJsonBody(request, maxBodyBytes, "A chat endpoint", (issues) => new UIMessagesInvalid({ issues }))
    if ("refused" in read) return read.refused
    const body = read.body
    let chat
    try {
      chat = fromUIMessages(body, options)
    } catch (error) {
      if (error instanceof UIMessagesInvalid) return errorResponse(400, error)
      throw error
    }
    const streamOptions: ChatStreamOptions = {
      ...(options.onSuspended === undefined ? {} : { onSuspended: (suspension: ChatSuspension) => options.onSuspended!(suspension, chat) }),
      ...(options.resumeLedger === undefined ? {} : { resumeLedger: options.resumeLedger })
    }
    // The request's signal stops the run too: some runtimes abort it when the client goes away but never
    // cancel the response body.
    const respond = (events: ReturnType<typeof chatStream>) =>
      eventStreamResponse(events, {
        format: "ui-message-stream",
        signal: request.signal,
        ...(options.headers === undefined ? {} : { headers: options.headers }),
        ...(options.onError === undefined ? {} : { onError: options.onError })
      })
    if (chat.input === undefined) {
      if (options.loadSuspended === undefined || chat.approvals.length === 0) {
        return errorResponse(400, new UIMessagesInvalid({
          issues: "the last message is not the user's: approval responses continue a suspended run (give chatHandler loadSuspended), not a new run"
        }))
      }
      const suspension = await options.loadSuspended(chat)
      if (suspension === undefined) return errorResponse(409, { _tag: "NoRunWaiting", message: "No run of this chat waits for approvals (it was resumed already, or never suspended)" })
      let decisions
      try {
        decisions = approvalDecisions(chat.approvals, suspension)
      } catch (error) {
        if (error instanceof UIMessagesInvalid) return errorResponse(400, error)
        throw error
      }
      return respond(chatResumeStream(builder, suspension.snapshot, decisions, streamOptions))
    }
    return respond(chatStream(builder, chat.transcript, chat.input as T["input"], streamOptions))
  }
}
