/**
 * Internal: the guard of a local HTTP server (the studio, an MCP server over HTTP) against DNS
 * rebinding and cross-site requests, checked before anything else: the `Host` header must name the
 * address the server listens on (a rebinding page reaches it under its own host name), and an
 * `Origin` header, when sent, must be the server's own.
 */
import type { IncomingMessage } from "node:http"

/**
 * The `Host` values that name a server listening on `host`:`port` (and its loopback names).
 *
 * @example
 * ```ts
 * allowedHosts("127.0.0.1", 4111) // Set { "127.0.0.1:4111", "localhost:4111", "[::1]:4111" }
 * ```
 */
export const allowedHosts = (host: string, port: number): ReadonlySet<string> => {
  const names = new Set([host, "127.0.0.1", "localhost", "[::1]"])
  if (host.includes(":") && !host.startsWith("[")) names.add(`[${host}]`)
  return new Set([...names].flatMap((name) => [`${name}:${port}`.toLowerCase(), ...(port === 80 ? [name.toLowerCase()] : [])]))
}

/** True for `1.2.3.4:80` or `[::1]:80`: a DNS-rebinding page always comes under a domain name, never an IP literal. */
const isIpLiteral = (host: string): boolean => /^(\d{1,3}\.){3}\d{1,3}(:\d+)?$/.test(host) || /^\[[0-9a-f:.]+\](:\d+)?$/.test(host)

/** The port a `Host` value names (`80` when it names none). */
const portOf = (host: string): string => /:(\d+)$/.exec(host)?.[1] ?? "80"

/**
 * Why a request is refused, or undefined when its Host and Origin are the server's. `anyIp`: the
 * server listens on every interface (`0.0.0.0`, `::`), so any IP-literal Host of the server's port is
 * its own; an Origin must then be the very address the request came to (the page's own origin).
 *
 * @example
 * ```ts
 * const foreign = refuseForeign(request, allowedHosts("127.0.0.1", port))
 * if (foreign !== undefined) return reply(403, foreign)
 * ```
 */
export const refuseForeign = (request: IncomingMessage, hosts: ReadonlySet<string>, anyIp = false): string | undefined => {
  const host = request.headers.host?.toLowerCase()
  const own = (name: string) => hosts.has(name) || (anyIp && isIpLiteral(name) && [...hosts].some((h) => portOf(h) === portOf(name)))
  if (host === undefined || !own(host)) return `the Host header ${JSON.stringify(host ?? "")} is not this server's address`
  const origin = request.headers.origin
  if (origin !== undefined && origin !== "null") {
    let originHost: string
    try {
      originHost = new URL(origin).host.toLowerCase()
    } catch {
      return `the Origin ${JSON.stringify(origin)} is not a URL`
    }
    if (originHost !== host && !hosts.has(originHost)) return `the Origin ${JSON.stringify(origin)} is not this server`
  } else if (origin === "null") {
    return "an opaque Origin (a sandboxed or file page) may not call this server"
  }
  return undefined
}

