/**
 * An HTTP proxy in front of a studio whose streams can be made to go silent, for the page's watchdog
 * tests: `silence()` stops forwarding the bytes of every response open at that moment (its events and
 * its keep-alive comments alike) while holding its connection open, as a stuck proxy or a network that
 * went away without a reset would; requests made afterwards pass as before. Host and Origin are those
 * of the studio, whose guard would otherwise refuse the proxy's.
 *
 * @example
 * ```ts
 * const proxy = await silencingProxy(studio)
 * await page.goto(`${proxy.origin}/?token=${studio.token}`)
 * proxy.silence()
 * ```
 */
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import type { Studio } from "../../../src/studio/index.ts"

export interface SilencingProxy {
  readonly origin: string
  /** Silences every response open now; says how many there were. */
  silence(): number
  close(): Promise<void>
}

export const silencingProxy = async (studio: Studio): Promise<SilencingProxy> => {
  const open = new Set<{ silent: boolean }>()
  const server = createServer((request, response) => {
    const headers = { ...request.headers, host: `127.0.0.1:${studio.port}`, ...(request.headers.origin === undefined ? {} : { origin: studio.origin }) }
    const upstream = httpRequest({ host: "127.0.0.1", port: studio.port, method: request.method, path: request.url, headers, agent: false }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      const state = { silent: false }
      open.add(state)
      answer.on("data", (chunk: Buffer) => {
        if (!state.silent) response.write(chunk)
      })
      answer.on("end", () => {
        if (!state.silent) response.end()
      })
      answer.on("close", () => open.delete(state))
      answer.on("error", () => response.destroy())
    })
    upstream.on("error", () => response.destroy())
    // The page gave up on the connection (or it ended): let the studio's side go too.
    response.on("close", () => upstream.destroy())
    request.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    silence: () => {
      for (const state of open) state.silent = true
      return open.size
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
