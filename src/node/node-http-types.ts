/**
 * The parts of Node's `http.IncomingMessage` and `http.ServerResponse` that `nodeHandler`,
 * `toWebRequest` and `sendResponse` use, declared here rather than imported from `node:http`: the
 * package's root and `/web` types then need no `@types/node` (an edge or browser project has none, and
 * TypeScript 7 includes it only when `types` lists it). Node's own objects, and Express's `req` and
 * `res`, are these.
 */

/**
 * A Node request as these adapters read it: `http.IncomingMessage` is one.
 *
 * @example
 * ```ts
 * createServer((req, res) => sendResponse(handler(toWebRequest(req, res)), res)) // req: IncomingMessage
 * ```
 */
export interface NodeIncomingMessage extends AsyncIterable<Uint8Array | string> {
  readonly method?: string | undefined
  readonly url?: string | undefined
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** Discards what is left of the body. */
  resume(): unknown
}

/**
 * A Node response as these adapters write it: `http.ServerResponse` is one.
 *
 * @example
 * ```ts
 * createServer((req, res) => sendResponse(new Response("ok"), res)) // res: ServerResponse
 * ```
 */
export interface NodeServerResponse {
  readonly destroyed: boolean
  readonly writableFinished: boolean
  readonly socket?: { readonly destroyed: boolean } | null | undefined
  writeHead(statusCode: number, headers: Record<string, string>): unknown
  flushHeaders(): void
  write(chunk: Uint8Array): boolean
  end(): unknown
  on(event: "close" | "drain", listener: () => void): unknown
}
