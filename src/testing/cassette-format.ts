/**
 * The cassette file: what `recordCassette` writes and `replayCassette` reads. A cassette is versioned
 * JSON (`version: 1`) holding, per model call, the request, how it was made (`chat` or `stream`), and
 * its answer: a whole response, the streamed parts with the milliseconds at which each arrived, or a
 * `ModelError` (its fields only; never its `cause`, which may hold an HTTP request with its headers).
 * It is written with sorted keys and two-space indentation, so a re-recording diffs line by line.
 */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import type { ModelError } from "../model/model-error.ts"
import type { LlmResponse, ModelRequest } from "../model/messages.ts"
import type { ModelMetadata } from "../model/model-client.ts"
import type { ResponsePart } from "../model/response-part.ts"
import { lazyPackage } from "../internal/lazy-package.ts"

/**
 * The cassette format this library writes and reads.
 *
 * @example
 * ```ts
 * JSON.parse(readFileSync("test/cassettes/calculator.json", "utf8")).version === CASSETTE_VERSION
 * ```
 */
export const CASSETTE_VERSION = 1

/** A `ModelError` as stored: its fields without `cause`. */
export type RecordedModelError = Omit<ConstructorParameters<typeof ModelError>[0], "cause">

/** One streamed part and when it arrived, in milliseconds after the request started. */
export interface TimedPart {
  readonly atMs: number
  readonly part: ResponsePart
}

/** How a recorded call ended. */
export type RecordedOutcome =
  | { readonly _tag: "Response"; readonly response: LlmResponse; readonly durationMs: number }
  /** A streamed answer; `error` when the stream failed after these parts. */
  | { readonly _tag: "Parts"; readonly parts: ReadonlyArray<TimedPart>; readonly error?: RecordedModelError; readonly durationMs: number }
  | { readonly _tag: "Error"; readonly error: RecordedModelError; readonly durationMs: number }

/** One model call: the request as the client received it and its outcome. */
export interface Interaction {
  readonly call: "chat" | "stream"
  readonly request: ModelRequest
  readonly outcome: RecordedOutcome
}

/**
 * A whole cassette.
 *
 * @example
 * ```ts
 * const empty: Cassette = { version: 1, interactions: [] }
 * ```
 */
export interface Cassette {
  readonly version: typeof CASSETTE_VERSION
  /** The recorded client's `metadata` (provider, model, settings), when it had one. */
  readonly metadata?: ModelMetadata
  /**
   * The salt of the tags in `[redacted:<tag>]` markers (see `recordCassette`): a live request is redacted
   * with it before it is matched. Absent from cassettes recorded before tags, whose markers are `[redacted]`.
   */
  readonly redactionSalt?: string
  readonly interactions: ReadonlyArray<Interaction>
}

/**
 * A cassette could not be read: no such file, not JSON, an unknown `version`, or a malformed entry.
 *
 * @example
 * ```ts
 * try { replayCassette("missing.json") } catch (e) { if (e instanceof CassetteError) console.log(e.message) }
 * ```
 */
export class CassetteError extends Data.TaggedError("CassetteError")<{
  readonly source: string
  readonly reason: string
}> {
  override get message(): string {
    return `Cassette ${this.source}: ${this.reason}`
  }
}

/**
 * Where a cassette lives: a file path, or a store with `read`/`write` (see `memoryCassette`).
 */
export type CassetteSource = string | CassetteStore

/** A place to keep a cassette's text. `read` returns undefined when there is none yet. */
export interface CassetteStore {
  readonly name: string
  read(): string | undefined
  write(text: string): void
}

/**
 * A cassette kept in memory (for tests of tests): `text` is what would be in the file.
 *
 * @example
 * ```ts
 * const tape = memoryCassette()
 * const model = recordCassette(client, { cassette: tape })
 * // ... later: replayCassette(tape)
 * ```
 */
export const memoryCassette = (initial?: string): CassetteStore & { readonly text: string | undefined } => {
  let text = initial
  return {
    name: "memory",
    get text() {
      return text
    },
    read: () => text,
    write: (next) => {
      text = next
    }
  }
}

// node:fs loads on first use of a file cassette, not with the package.
const fs = lazyPackage<typeof import("node:fs")>("node:fs")
const path = lazyPackage<typeof import("node:path")>("node:path")

/**
 * Internal: the store behind a source: a file path becomes a file store (its folder created on write).
 *
 * @example
 * ```ts
 * storeOf("test/cassettes/a.json").read() // the file's text, or undefined when there is none
 * ```
 */
export const storeOf = (source: CassetteSource): CassetteStore =>
  typeof source !== "string"
    ? source
    : {
      name: source,
      read: () => io(source, "read", () => (fs().existsSync(source) ? fs().readFileSync(source, "utf8") : undefined)),
      write: (text) => io(source, "write", () => replaceFile(source, text))
    }

let temporaries = 0

/**
 * Writes `text` to a temporary file beside `target`, then renames it over `target`: a process killed
 * mid-write leaves the previous cassette whole (a rename within a folder is atomic), never half a file.
 * No fsync: the risk is a test process dying, not the machine losing power, and a sync per call would
 * cost every recorded call milliseconds.
 */
const replaceFile = (target: string, text: string): void => {
  const folder = path().dirname(target)
  fs().mkdirSync(folder, { recursive: true })
  const pid = (globalThis as { process?: { pid?: number } }).process?.pid ?? 0
  const temporary = path().join(folder, `.${path().basename(target)}.${pid}.${++temporaries}.tmp`)
  try {
    fs().writeFileSync(temporary, text)
    fs().renameSync(temporary, target)
  } catch (error) {
    try {
      fs().rmSync(temporary, { force: true })
    } catch {
      // The write's own error is the one to report.
    }
    throw error
  }
}

/** A file operation whose failure (a folder in the way, no permission) is a `CassetteError`. */
const io = <A>(source: string, what: string, operation: () => A): A => {
  try {
    return operation()
  } catch (error) {
    throw new CassetteError({ source, reason: `cannot ${what} it (${error instanceof Error ? error.message : String(error)})` })
  }
}

/**
 * Internal: sorts object keys recursively and drops undefined values, so equal values print equally.
 *
 * @example
 * ```ts
 * JSON.stringify(canonical({ b: 1, a: undefined, c: { z: 1, y: 2 } })) // '{"b":1,"c":{"y":2,"z":1}}'
 * ```
 */
export const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : canonical(v)))
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key]
      if (v !== undefined) out[key] = canonical(v)
    }
    return out
  }
  return value
}

/**
 * A cassette as stable JSON: sorted keys, two-space indentation, a final newline.
 *
 * @example
 * ```ts
 * stableJson({ b: 1, a: [2] }) // '{\n  "a": [\n    2\n  ],\n  "b": 1\n}\n'
 * ```
 */
export const stableJson = (value: unknown): string => `${JSON.stringify(canonical(value), null, 2)}\n`

// The shape checked on read: enough that replay never meets a value of the wrong type.
const Usage = Schema.Struct({ inputTokens: Schema.Number, outputTokens: Schema.Number })
const ToolCall = Schema.Struct({ id: Schema.String, name: Schema.String, arguments: Schema.String })
const Response = Schema.Union([
  Schema.Struct({ _tag: Schema.Literal("Text"), content: Schema.String, usage: Schema.optionalKey(Usage) }),
  Schema.Struct({ _tag: Schema.Literal("ToolCalls"), calls: Schema.Array(ToolCall), content: Schema.optionalKey(Schema.String), usage: Schema.optionalKey(Usage) })
])
const KnownPart = Schema.Union([
  Schema.Struct({ _tag: Schema.Literals(["TextDelta", "ReasoningDelta"]), delta: Schema.String }),
  Schema.Struct({ _tag: Schema.Literal("ReasoningEnd"), signature: Schema.optionalKey(Schema.String) }),
  Schema.Struct({ _tag: Schema.Literal("Reasoning"), part: Schema.Record(Schema.String, Schema.Unknown) }),
  Schema.Struct({ _tag: Schema.Literal("ToolCallStart"), index: Schema.Number, id: Schema.optionalKey(Schema.String), name: Schema.String }),
  Schema.Struct({ _tag: Schema.Literal("ToolCallDelta"), index: Schema.Number, delta: Schema.String }),
  Schema.Struct({ _tag: Schema.Literal("ToolCallEnd"), index: Schema.Number }),
  Schema.Struct({ _tag: Schema.Literal("Usage"), usage: Usage }),
  Schema.Struct({ _tag: Schema.Literal("Finish"), reason: Schema.optionalKey(Schema.String) })
])
const ErrorFields = Schema.Struct({ provider: Schema.String, reason: Schema.String, usage: Schema.optionalKey(Usage) })
const Outcome = Schema.Union([
  Schema.Struct({ _tag: Schema.Literal("Response"), response: Response, durationMs: Schema.Number }),
  Schema.Struct({ _tag: Schema.Literal("Parts"), parts: Schema.Array(Schema.Struct({ atMs: Schema.Number, part: Schema.Struct({ _tag: Schema.String }) })), error: Schema.optionalKey(ErrorFields), durationMs: Schema.Number }),
  Schema.Struct({ _tag: Schema.Literal("Error"), error: ErrorFields, durationMs: Schema.Number })
])
const Message = Schema.Union([
  Schema.Struct({ role: Schema.Literals(["system", "user"]), content: Schema.String }),
  Schema.Struct({ role: Schema.Literal("assistant"), content: Schema.String, toolCalls: Schema.optionalKey(Schema.Array(ToolCall)) }),
  Schema.Struct({ role: Schema.Literal("tool"), content: Schema.String, toolCallId: Schema.String, name: Schema.String })
])
const Request = Schema.Struct({ messages: Schema.Array(Message), tools: Schema.Array(Schema.Struct({ name: Schema.String })) })
const Shape = Schema.Struct({
  version: Schema.Literal(CASSETTE_VERSION),
  metadata: Schema.optionalKey(Schema.Struct({
    provider: Schema.optionalKey(Schema.String),
    model: Schema.optionalKey(Schema.String),
    temperature: Schema.optionalKey(Schema.Number),
    maxTokens: Schema.optionalKey(Schema.Number)
  })),
  redactionSalt: Schema.optionalKey(Schema.String),
  interactions: Schema.Array(Schema.Struct({ call: Schema.Literals(["chat", "stream"]), request: Request, outcome: Outcome }))
})
const checkShape = Schema.decodeUnknownResult(Shape)
const checkPart = Schema.decodeUnknownResult(KnownPart)
// Parts of kinds this module does not know (added by a newer provider) pass unchecked: the assembler
// ignores what it does not know, and a cassette stays readable when parts are added.
const knownTags = new Set(["TextDelta", "ReasoningDelta", "ReasoningEnd", "Reasoning", "ToolCallStart", "ToolCallDelta", "ToolCallEnd", "Usage", "Finish"])

/**
 * Parses a cassette's text; throws `CassetteError` on anything but a version-1 cassette.
 *
 * @example
 * ```ts
 * parseCassette('{"version":1,"interactions":[]}', "inline") // { version: 1, interactions: [] }
 * ```
 */
export const parseCassette = (text: string, source: string): Cassette => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new CassetteError({ source, reason: `not JSON (${error instanceof Error ? error.message : String(error)})` })
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw new CassetteError({ source, reason: "not a JSON object" })
  const version = (json as { version?: unknown }).version
  if (version !== CASSETTE_VERSION) {
    throw new CassetteError({
      source,
      reason: `unsupported cassette version ${JSON.stringify(version) ?? "(none)"}: this library reads version ${CASSETTE_VERSION}; re-record it with this version`
    })
  }
  const checked = checkShape(json)
  if (checked._tag === "Failure") throw new CassetteError({ source, reason: `malformed cassette: ${checked.failure.message}` })
  // The decoded value keeps only the keys the shape names: check the parts of the original.
  ;(json as Cassette).interactions.forEach(({ outcome }, i) => {
    if (outcome._tag !== "Parts") return
    outcome.parts.forEach(({ part }, j) => {
      const partChecked = knownTags.has(part._tag) ? checkPart(part) : undefined
      if (partChecked?._tag === "Failure") {
        throw new CassetteError({ source, reason: `malformed cassette: interaction ${i + 1}, part ${j + 1}: ${partChecked.failure.message}` })
      }
    })
  })
  return json as Cassette
}
