/**
 * The AI SDK's own client side, for the web tests: `readUI` reads a UI message stream `Response` as
 * `useChat` does (`parseJsonEventStream` with the SDK's `uiMessageChunkSchema`, then
 * `readUIMessageStream`), keeping every chunk and every chunk the schema refused; `TestChat` is the
 * SDK's `AbstractChat` (what `useChat` wraps) with its state in plain arrays, posting to a handler
 * through `DefaultChatTransport` without a server.
 */
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, DefaultChatTransport, parseJsonEventStream, readUIMessageStream, type UIMessage, type UIMessageChunk, uiMessageChunkSchema } from "ai"

export const readUI = async (response: Response, message?: UIMessage) => {
  const chunks: Array<UIMessageChunk> = []
  const refused: Array<unknown> = []
  const parsed = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<{ success: true; value: UIMessageChunk } | { success: false; error: unknown }, UIMessageChunk>({
      transform(part, controller) {
        if (!part.success) return void refused.push(part.error)
        chunks.push(part.value)
        controller.enqueue(part.value)
      }
    })
  )
  const errors: Array<string> = []
  let last: UIMessage | undefined
  for await (const m of readUIMessageStream({ stream: parsed, onError: (e) => void errors.push(String(e)), ...(message === undefined ? {} : { message }) })) last = m
  return { chunks, refused, errors, message: last }
}

class ArrayState implements ChatState<UIMessage> {
  status: ChatStatus = "ready"
  error: Error | undefined = undefined
  messages: Array<UIMessage> = []
  pushMessage = (message: UIMessage) => void this.messages.push(message)
  popMessage = () => void this.messages.pop()
  // As @ai-sdk/react's state does: a replaced message is a copy (so a renamed one is no longer found by id).
  replaceMessage = (index: number, message: UIMessage) => void (this.messages[index] = this.snapshot(message))
  snapshot = <T>(thing: T): T => structuredClone(thing)
}

/** `useChat` without React: the SDK's chat state machine over `handler`. */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(handler: (request: Request) => Promise<Response>, init: Omit<ChatInit<UIMessage>, "transport" | "id"> = {}) {
    const fetch = (url: string | URL | Request, request?: RequestInit) => handler(new Request(url, request))
    super({ ...init, id: "chat-1", state: new ArrayState(), transport: new DefaultChatTransport({ api: "http://localhost/api/chat", fetch }) })
  }
}
