/**
 * The studio's guards, checked on every request before anything else: the `Host` header must name the
 * address the studio listens on (a DNS-rebinding page reaches us under its own host name), an `Origin`
 * header, when sent, must be the studio's own (no cross-site form posts or fetches), and every `/api/`
 * call must carry the token printed at start (as Jupyter does).
 */
import { randomBytes, timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"

/** A new random token: 24 bytes, base64url. */
export const newToken = (): string => randomBytes(24).toString("base64url")

/** The `Host` values that name the studio at `host`:`port`. */
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
 * Why a request is refused, or undefined when its Host and Origin are the studio's. `anyIp`: the
 * studio listens on every interface (`0.0.0.0`, `::`), so any IP-literal Host of the studio's port is
 * its own; an Origin must then be the very address the request came to (the page's own origin).
 */
export const refuseForeign = (request: IncomingMessage, hosts: ReadonlySet<string>, anyIp = false): string | undefined => {
  const host = request.headers.host?.toLowerCase()
  const own = (name: string) => hosts.has(name) || (anyIp && isIpLiteral(name) && [...hosts].some((h) => portOf(h) === portOf(name)))
  if (host === undefined || !own(host)) return `the Host header ${JSON.stringify(host ?? "")} is not this studio's address`
  const origin = request.headers.origin
  if (origin !== undefined && origin !== "null") {
    let originHost: string
    try {
      originHost = new URL(origin).host.toLowerCase()
    } catch {
      return `the Origin ${JSON.stringify(origin)} is not a URL`
    }
    if (originHost !== host && !hosts.has(originHost)) return `the Origin ${JSON.stringify(origin)} is not this studio`
  } else if (origin === "null") {
    return "an opaque Origin (a sandboxed or file page) may not call the studio"
  }
  return undefined
}

/** The token a request carries: Authorization Bearer, `x-studio-token` or the `token` query parameter (never a cookie: see `studio-server.ts`). */
export const tokenOf = (request: IncomingMessage, url: URL): string | undefined => {
  const authorization = request.headers.authorization
  if (authorization?.startsWith("Bearer ") === true) return authorization.slice("Bearer ".length).trim()
  const header = request.headers["x-studio-token"]
  if (typeof header === "string") return header
  const query = url.searchParams.get("token")
  if (query !== null) return query
  return undefined
}

/** Compares tokens in constant time. */
export const sameToken = (given: string | undefined, expected: string): boolean => {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
