/**
 * Node's \`http\` meets fetch-style handlers: writing a standard \`Response\` (such as the Server-Sent
 * Events of \`eventStreamResponse\`) to a \`ServerResponse\` as its body streams.
 */
import type { NodeServerResponse } from "./node-http-types.ts"

/** The response can no longer reach its client: destroyed, or its socket closed. */
const gone = (res: NodeServerResponse): boolean => res.destroyed || res.socket?.destroyed === true

/**
 * Writes a fetch `Response` (such as `eventStreamResponse(...)`) to a Node `http` response, chunk by
 * chunk, reading the next chunk only once the socket took the last one (a slow client slows the run
 * down instead of filling the server's memory); when the client disconnects, the body is cancelled
 * (which stops the run), also when it left before the response was ready.
 *
 * @example
 * ```ts
 * createServer((req, res) => sendResponse(eventStreamResponse(calculator.runStream("2 + 2?")), res))
 * ```
 */
export const sendResponse = async (response: Response, res: NodeServerResponse): Promise<void> => {
  // A client that left while the handler prepared its response: its "close" has already fired.
  if (gone(res)) {
    await response.body?.cancel().catch(() => {})
    res.end()
    return
  }
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()))
  res.flushHeaders()
  if (response.body === null) {
    res.end()
    return
  }
  const reader = response.body.getReader()
  let closed = false
  let drained: (() => void) | undefined
  const close = () => {
    closed = true
    drained?.()
    reader.cancel().catch(() => {})
  }
  res.on("close", close)
  res.on("drain", () => drained?.())
  try {
    while (!closed) {
      const { done, value } = await reader.read()
      if (done) break
      if (!res.write(value) && !closed) {
        // A response destroyed in between never drains.
        if (gone(res)) close()
        else await new Promise<void>((resolve) => (drained = resolve))
      }
      drained = undefined
    }
  } catch {
    // The client went away, or the body failed: nothing more to send.
  } finally {
    res.end()
  }
}
