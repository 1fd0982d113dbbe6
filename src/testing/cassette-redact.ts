/**
 * Internal: what a cassette never writes. Secrets are found in the text a cassette would write (the
 * strings named by the caller, the values of `*_API_KEY`/`*_TOKEN`/`*_SECRET` environment variables,
 * key- and credential-shaped text, the `user:password@` of a URL) and each stretch found is replaced by
 * a marker `[redacted:<tag>]`.
 *
 * Two choices make this sound rather than merely hopeful:
 * - **Streams are redacted as the text they make, not piece by piece.** A streamed answer arrives torn
 *   anywhere (`"sk-pr"`, `"oj-A1b2…"`); the deltas of one kind (text, reasoning, each tool call's
 *   arguments) are joined, the secrets found in the joined text, and every piece is rewritten so that
 *   none keeps a character of a secret: the marker goes to the piece where the secret started, the
 *   pieces it spanned lose their part of it. Joined again, the pieces are the joined text redacted.
 * - **Redaction never makes two different requests equal.** The tag is a slow, salted hash (scrypt,
 *   the salt kept in the cassette) of the stretch it replaces, cut to 8 hex digits: a live request is
 *   redacted with the cassette's salt before it is matched, so the same secret gives the same marker
 *   and a different one (or ordinary words a loose pattern would have eaten) does not match. The tag
 *   says nothing useful about a high-entropy key; a short password could be guessed from it by trying
 *   candidates, slowly, which is why it is short and slow. A cassette written before tags (no salt)
 *   keeps the bare `[redacted]` marker, so it still replays as it did.
 */
import type { Interaction, TimedPart } from "./cassette-format.ts"
import type { ResponsePart } from "../model/response-part.ts"
import { lazyPackage } from "../internal/lazy-package.ts"
import { urlCredentials } from "../internal/url-credentials.ts"

const crypto = lazyPackage<typeof import("node:crypto")>("node:crypto")

/** The marker of a cassette without a salt (recorded before tags). */
export const LEGACY_MARKER = "[redacted]"

/**
 * Credential shapes, each with the group that is the secret (0: the whole match). Case-sensitive and
 * token-shaped on purpose: "the ring bearer is Frodo" and `sk-learn-pipeline` are words, not keys.
 * - API keys in the `sk-` family (OpenAI `sk-proj-…`/`sk-svcacct-…`, Anthropic `sk-ant-…`, OpenRouter
 *   `sk-or-…`): at least 20 characters after `sk-`, one of them a digit;
 * - a `Bearer` token of at least 16 token characters with a digit, or a JWT (`eyJ…`);
 * - after `Authorization:` (a header, not prose), the credential whatever its length;
 * - GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`);
 * - the `user:password` of a URL (`https://user:pass@host`);
 * - the value of a URL query parameter that names a credential (`?api-key=…`, `&key=…`, `access_token`,
 *   `token`, `secret`, `password`, `sig`: Azure's, Gemini's and signed URLs'), in a URL a server may
 *   echo in an error.
 */
const SHAPES: ReadonlyArray<{ readonly pattern: RegExp; readonly group: number }> = [
  { pattern: /(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}/g, group: 0 },
  { pattern: /\bBearer[ \t]+((?=[A-Za-z0-9._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{16,}|eyJ[A-Za-z0-9._~+/=-]+)/g, group: 1 },
  { pattern: /\b[Aa]uthorization["']?[ \t]*[:=][ \t]*["']?(?:(?:Bearer|Basic|Token)[ \t]+)?([^\s"',;]+)/g, group: 1 },
  { pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, group: 0 },
  { pattern: urlCredentials, group: 1 },
  { pattern: /[?&](?:api[-_]?key|key|access[-_]?token|token|secret|password|passwd|sig|signature)=([^&#\s"'<>]+)/gi, group: 1 }
]

const envSecrets = (): ReadonlyArray<string> => {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {}
  return Object.entries(env)
    .filter(([name, value]) => /(_API_KEY|_TOKEN|_SECRET|^API_KEY)$/i.test(name) && value !== undefined && value.length >= 8)
    .map(([, value]) => value!)
}

/**
 * Internal: a fresh salt for a new cassette (16 random bytes, hex).
 *
 * @example
 * ```ts
 * newSalt() // "3f9c…" (32 hex digits)
 * ```
 */
export const newSalt = (): string => {
  const bytes = new Uint8Array(16)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

/** Half-open ranges of `text` that are secrets, sorted and merged. */
const rangesOf = (text: string, exact: ReadonlyArray<string>): Array<[number, number]> => {
  const found: Array<[number, number]> = []
  for (const secret of exact) {
    for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) found.push([at, at + secret.length])
  }
  for (const { group, pattern } of SHAPES) {
    for (const match of text.matchAll(pattern)) {
      const whole = match[0]
      const part = match[group]
      if (part === undefined || part.length === 0) continue
      const start = match.index + (group === 0 ? 0 : whole.lastIndexOf(part))
      found.push([start, start + part.length])
    }
  }
  found.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const merged: Array<[number, number]> = []
  for (const [a, b] of found) {
    const last = merged.at(-1)
    if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b)
    else merged.push([a, b])
  }
  return merged
}

/** What `redactorOf` returns: redaction of any value, and of a whole interaction (streams joined). */
export interface Redactor {
  /** Every string in `value` redacted on its own. */
  readonly value: <A>(value: A) => A
  /** Pieces of one text (stream deltas) redacted as the text they make; as many pieces come back. */
  readonly pieces: (pieces: ReadonlyArray<string>) => Array<string>
  /** An interaction as a cassette writes it: request and answer redacted, streamed deltas joined per kind. */
  readonly interaction: (interaction: Interaction) => Interaction
}

/**
 * Internal: the redactor of a cassette whose salt is `salt` (undefined: a cassette recorded before
 * tags, whose marker is the bare `[redacted]`).
 *
 * @example
 * ```ts
 * redactorOf(["hunter2-long"], salt).value("pw hunter2-long") // "pw [redacted:1a2b3c4d]"
 * ```
 */
export const redactorOf = (secrets: ReadonlyArray<string>, salt: string | undefined): Redactor => {
  const exact = [...new Set([...secrets, ...envSecrets()])].filter((s) => s.length > 0)
  const tags = new Map<string, string>()
  const marker = (stretch: string): string => {
    if (salt === undefined) return LEGACY_MARKER
    let tag = tags.get(stretch)
    if (tag === undefined) {
      tag = crypto().scryptSync(stretch, `effect-agent-dsl/cassette/${salt}`, 4, { N: 1 << 14, r: 8, p: 1 }).toString("hex")
      tags.set(stretch, tag)
    }
    return `[redacted:${tag}]`
  }
  const pieces = (parts: ReadonlyArray<string>): Array<string> => {
    const joined = parts.join("")
    const ranges = rangesOf(joined, exact)
    if (ranges.length === 0) return [...parts]
    const out: Array<string> = []
    let offset = 0
    for (const piece of parts) {
      const end = offset + piece.length
      let text = ""
      let at = offset
      for (const [a, b] of ranges) {
        if (b <= at || a >= end) continue
        // A secret starting in this piece leaves its marker here; one that started before only its absence.
        if (a >= at) text += joined.slice(at, a) + marker(joined.slice(a, b))
        at = Math.min(b, end)
      }
      out.push(at < end ? text + joined.slice(at, end) : text)
      offset = end
    }
    return out
  }
  const text = (s: string): string => pieces([s])[0]!
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return text(value)
    if (Array.isArray(value)) return value.map(walk)
    if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
    return value
  }
  const value = <A>(v: A): A => walk(v) as A
  const streamed = (parts: ReadonlyArray<TimedPart>): Array<TimedPart> => {
    const out: Array<TimedPart> = parts.map((p) => value(p))
    const groups = new Map<string, Array<number>>()
    parts.forEach(({ part }, i) => {
      const key = part._tag === "TextDelta" || part._tag === "ReasoningDelta" ? part._tag : part._tag === "ToolCallDelta" ? `ToolCallDelta:${part.index}` : undefined
      if (key === undefined || typeof (part as { delta?: unknown }).delta !== "string") return
      const group = groups.get(key)
      if (group === undefined) groups.set(key, [i])
      else group.push(i)
    })
    for (const indices of groups.values()) {
      const redacted = pieces(indices.map((i) => (parts[i]!.part as { readonly delta: string }).delta))
      indices.forEach((i, k) => {
        out[i] = { ...out[i]!, part: { ...parts[i]!.part, delta: redacted[k]! } as ResponsePart }
      })
    }
    return out
  }
  const interaction = (i: Interaction): Interaction =>
    i.outcome._tag !== "Parts"
      ? value(i)
      : { ...value({ call: i.call, request: i.request }), outcome: { ...value(i.outcome), parts: streamed(i.outcome.parts) } }
  return { value, pieces, interaction }
}
