/**
 * A Web-standard handler (`(request: Request) => Promise<Response>`, such as `chatHandler(...)`) as a
 * Node `http` or Express handler: the Node request becomes a `Request` (its body streamed, or the body
 * a parser such as `express.json()` already read), the `Response` is written back with `sendResponse`
 * (streaming; the client going away cancels the body, which stops the run). Nothing of Node is
 * imported, not even its types (`node-http-types.ts`): importing this loads no Node module.
 */
import type { NodeIncomingMessage, NodeServerResponse } from "./node-http-types.ts"
import { sendResponse } from "./send-response.ts"

/** A Node request as Express hands it over: possibly with a parsed `body` and its `originalUrl`. */
export type NodeRequest = NodeIncomingMessage & { readonly body?: unknown; readonly originalUrl?: string }

const bodyOf = (req: NodeRequest): NonNullable<RequestInit["body"]> | null => {
  if (req.method === "GET" || req.method === "HEAD") return null
  // A body parser (express.json(), express.text()) already consumed the stream: use what it read.
  if (req.body !== undefined) {
    if (typeof req.body === "string" || req.body instanceof Uint8Array) return req.body as NonNullable<RequestInit["body"]>
    return JSON.stringify(req.body)
  }
  const chunks = req[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next()
      if (done) controller.close()
      else controller.enqueue(typeof value === "string" ? new TextEncoder().encode(value) : new Uint8Array(value))
    },
    // The handler stopped reading (a body over its limit): the rest is discarded, so the answer can
    // still be written on this connection.
    cancel() {
      req.resume()
    }
  })
}

/** A `Request` for a Node request (its URL from the Host header; its signal aborted when the client goes). */
export const toWebRequest = (req: NodeRequest, res?: NodeServerResponse): Request => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
  }
  // A parsed body is sent again as text of another length.
  if (req.body !== undefined) headers.delete("content-length")
  const controller = new AbortController()
  res?.on("close", () => {
    if (!res.writableFinished) controller.abort()
  })
  const body = bodyOf(req)
  return new Request(`http://${req.headers.host ?? "localhost"}${req.originalUrl ?? req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    signal: controller.signal,
    ...(body === null ? {} : { body, duplex: "half" })
  } as RequestInit)
}

/**
 * `handler` for Node's `http` and Express: `app.post("/api/chat", nodeHandler(chatHandler(agent)))`.
 * A handler that throws answers 500.
 *
 * @example
 * ```ts
 * import { createServer } from "node:http"
 * createServer(nodeHandler(chatHandler(assistant))).listen(3000)
 * ```
 */
export const nodeHandler = (handler: (request: Request) => Response | Promise<Response>) =>
async (req: NodeRequest, res: NodeServerResponse): Promise<void> => {
  let response: Response
  try {
    response = await handler(toWebRequest(req, res))
  } catch (error) {
    response = new Response(JSON.stringify({ error: { _tag: "HandlerFailed", message: error instanceof Error ? error.message : String(error) } }), {
      status: 500,
      headers: { "content-type": "application/json; charset=utf-8" }
    })
  }
  await sendResponse(response, res)
}
