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

export { allowedHosts, refuseForeign } from "../../internal/host-guard.ts"

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
