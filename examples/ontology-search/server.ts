/**
 * The search over HTTP: `GET /search?q=...` streams the run as Server-Sent Events (the library's
 * `eventStreamResponse`: `RunStart`, `ModelResponse`, `ToolUse` of any investigation, `RunEnd`), then
 * one `SearchResult` event with the corrected slots (interpretation, corrections, gaps, confidence),
 * the compiled SPARQL and the hits. `GET /` serves a small page that shows them.
 *
 * Run: npm run example:search:server     then open http://127.0.0.1:8788/
 * Without AI_PROVIDER (or with it empty) it answers from the scripted stand-in; with it, from the provider of the environment.
 */
import { realpathSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { Stream } from "effect"
import { type AgentError, eventStreamResponse, type ModelClient, type RunStreamEvent, sendResponse } from "effect-agent-dsl"
import { searchPage } from "./page.ts"
import { answer, searchAgent, settingsFromEnv } from "./search-agent.ts"
import type { Submission } from "./slots.ts"
import { standInModel } from "./stand-in-model.ts"
import { type Catalogue, loadCatalogue } from "./store.ts"

/**
 * The run's events followed by a `SearchResult` event once the slots are in (not a run event: the
 * application's own, framed the same way).
 *
 * @example
 * ```ts
 * eventStreamResponse(searchStream(loadCatalogue(), standInModel(), 3, "motorway maps"))
 * ```
 */
export const searchStream = (catalogue: Catalogue, client: ModelClient, maxSteps: number, question: string): Stream.Stream<RunStreamEvent, AgentError> =>
  searchAgent(catalogue, { client, maxSteps }).runStream(question).pipe(
    Stream.flatMap((event) => {
      if (event._tag !== "RunEnd" || event.outcome._tag !== "Success") return Stream.make(event)
      const result = answer(catalogue, event.outcome.output as Submission, 50)
      return Stream.make(event, { _tag: "SearchResult", ...result } as unknown as RunStreamEvent)
    })
  )

/**
 * Starts the server; `port` 0 picks a free one.
 *
 * @example
 * ```ts
 * const { url, close } = await startSearchServer(0, standInModel())
 * ```
 */
export const startSearchServer = async (port = 8788, model?: { readonly client: ModelClient; readonly maxSteps: number }) => {
  const catalogue = loadCatalogue()
  // AI_PROVIDER set but empty (or blank) counts as unset, as in main.ts.
  const settings = model ?? ((process.env.AI_PROVIDER ?? "").trim() === "" ? { client: standInModel(), maxSteps: 3 } : settingsFromEnv())
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost")
    if (url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(searchPage)
      return
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("GET / or GET /search?q=<a question>")
      return
    }
    const question = url.searchParams.get("q")?.trim() ?? ""
    if (url.pathname !== "/search" || question === "" || question.length > 1000) {
      res.writeHead(url.pathname === "/search" ? 400 : 404, { "content-type": "text/plain" }).end("try /search?q=<a question of at most 1000 characters>")
      return
    }
    await sendResponse(eventStreamResponse(searchStream(catalogue, settings.client, settings.maxSteps, question)), res)
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const address = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

// Run as a command, not imported: compared as real paths, so a path with a space, a symlinked checkout or
// Windows still matches (a `file://${process.argv[1]}` string does not, and the command would do nothing).
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const { url } = await startSearchServer(Number(process.env.PORT ?? 8788))
  console.log(`ontology search on ${url}/  (SSE: ${url}/search?q=motorway%20maps%20in%20Germany)`)
}
