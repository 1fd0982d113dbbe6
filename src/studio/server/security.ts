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

/** Why a request is refused, or undefined when its Host and Origin are the studio's. */
export const refuseForeign = (request: IncomingMessage, hosts: ReadonlySet<string>): string | undefined => {
  const host = request.headers.host?.toLowerCase()
  if (host === undefined || !hosts.has(host)) return `the Host header ${JSON.stringify(host ?? "")} is not this studio's address`
  const origin = request.headers.origin
  if (origin !== undefined && origin !== "null") {
    let originHost: string
    try {
      originHost = new URL(origin).host.toLowerCase()
    } catch {
      return `the Origin ${JSON.stringify(origin)} is not a URL`
    }
    if (!hosts.has(originHost)) return `the Origin ${JSON.stringify(origin)} is not this studio`
  } else if (origin === "null") {
    return "an opaque Origin (a sandboxed or file page) may not call the studio"
  }
  return undefined
}

/** The token a request carries: Authorization Bearer, `x-studio-token`, the `token` query parameter or the `studio_token` cookie. */
export const tokenOf = (request: IncomingMessage, url: URL): string | undefined => {
  const authorization = request.headers.authorization
  if (authorization?.startsWith("Bearer ") === true) return authorization.slice("Bearer ".length).trim()
  const header = request.headers["x-studio-token"]
  if (typeof header === "string") return header
  const query = url.searchParams.get("token")
  if (query !== null) return query
  const cookie = request.headers.cookie
  if (cookie !== undefined) {
    for (const part of cookie.split(";")) {
      const [name, ...value] = part.trim().split("=")
      if (name === "studio_token") return decodeURIComponent(value.join("="))
    }
  }
  return undefined
}

/** Compares tokens in constant time. */
export const sameToken = (given: string | undefined, expected: string): boolean => {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
