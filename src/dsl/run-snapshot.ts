/**
 * The run snapshot as data: its Schema with a JSON encoding, in `dsl/` so the builder's result types
 * (`Suspended`) can name it. The runtime takes snapshots and continues runs from them
 * (`runtime/snapshot.ts`).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { SnapshotInvalid } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { strictOptions, strictResultDecoder } from "../internal/strict-decode.ts"
import { LlmMessageSchema, ToolCallSchema } from "../model/message-schemas.ts"


const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
/** Tokens and milliseconds spent: never below zero, or an edited snapshot would lift the budget by as much. */
const Amount = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

const LedgerSchema = Schema.Struct({
  turns: Count,
  toolCalls: Count,
  tokens: Amount,
  lastTool: Schema.optionalKey(Schema.String),
  consecutive: Count,
  thresholdsFired: Schema.Array(Schema.String),
  extended: Schema.optionalKey(Schema.Record(Schema.String, Count))
})

const StateSchema = Schema.Struct({
  runId: Schema.String,
  input: Schema.String,
  skill: Schema.String,
  elapsedMs: Amount,
  transcript: Schema.Array(LlmMessageSchema),
  pending: Schema.Array(ToolCallSchema),
  offered: Schema.Array(Schema.String),
  ledger: LedgerSchema,
  invalidArgsRetries: Schema.Record(Schema.String, Count),
  knowledge: Schema.Record(Schema.String, Schema.String),
  /**
   * Calls waiting for a human decision (`approve`, `deny`, `edit`), with their arguments as JSON: the
   * model's own (a `reason` says when the run changed them before asking), or a child's waiting call
   * as the child's snapshot lists it. A resume refuses entries that describe no such call.
   */
  awaiting: Schema.optionalKey(Schema.Array(Schema.Struct({ id: Schema.String, tool: Schema.String, args: Schema.Json, reason: Schema.optionalKey(Schema.String) }))),
  /**
   * Decisions taken and not applied yet (on calls after the one the run suspended on again), so a
   * later resume neither asks about them again nor lets them change. Approved or edited arguments as
   * JSON, decoded again with the tool's Schema when applied; from an unsigned snapshot, arguments other
   * than the model's own are applied only when the tool's `needsApproval` clears them.
   */
  decided: Schema.optionalKey(Schema.Array(Schema.Struct({
    id: Schema.String,
    tool: Schema.String,
    decision: Schema.Literals(["approve", "edit", "deny"]),
    args: Schema.optionalKey(Schema.Json),
    reason: Schema.optionalKey(Schema.String)
  }))),
  /**
   * Child runs that suspended with this run: an agent used as a tool (`id`: the call that runs it,
   * `tool`: its name), with the child's own snapshot; its waiting calls are this run's, as `<id>/<child id>`
   * (with `#2`, `#3`, … after it when that is the id of one of this run's own pending calls).
   */
  children: Schema.optionalKey(Schema.Array(Schema.Struct({ id: Schema.String, tool: Schema.String, snapshot: Schema.Json }))),
  /** The handoff target that suspended: its agent's name and its own snapshot (its waiting calls are this run's). */
  handoff: Schema.optionalKey(Schema.Struct({ agent: Schema.String, snapshot: Schema.Json }))
})

/**
 * The Schema of a run snapshot. Version 1; `fingerprint` identifies the definition it was taken with.
 *
 * @example
 * ```ts
 * const json = Schema.encodeSync(Schema.fromJsonString(RunSnapshotSchema))(snapshot)
 * ```
 */
export const RunSnapshotSchema = Schema.Struct({
  version: Schema.Literal(1),
  agent: Schema.String,
  fingerprint: Schema.String,
  state: StateSchema,
  /** HMAC of the rest, when the agent signs its snapshots (`.signSnapshots(secret)`). */
  signature: Schema.optionalKey(Schema.String)
})

/** A run between two steps. */
export type RunSnapshot = typeof RunSnapshotSchema.Type

const jsonCodec = Schema.fromJsonString(RunSnapshotSchema)
const encodeJson = Schema.encodeSync(jsonCodec)
const decodeJson = Schema.decodeUnknownEffect(jsonCodec)

/**
 * A snapshot as JSON text.
 *
 * @example
 * ```ts
 * await writeFile("run.json", encodeSnapshot(snapshot))
 * ```
 */
export const encodeSnapshot = (snapshot: RunSnapshot): string => encodeJson(snapshot)

/**
 * A snapshot from a value (the parsed JSON, or a snapshot object); `SnapshotInvalid` when it is not one.
 *
 * @example
 * ```ts
 * const snapshot = yield* decodeSnapshotValue(JSON.parse(text))
 * ```
 */
export const decodeSnapshotValue = (value: unknown): Effect.Effect<RunSnapshot, SnapshotInvalid> =>
  Effect.suspend(() => {
    let decoded: Result.Result<RunSnapshot, Schema.SchemaError>
    try {
      decoded = decodeValue(value)
    } catch {
      // A value that throws when read (a getter, a proxy trap): Schema's Effect decoder finds what
      // threw; not a snapshot, whatever it holds.
      return Schema.decodeUnknownEffect(RunSnapshotSchema)(value, strictOptions).pipe(
        Effect.mapError((error) => new SnapshotInvalid({ issues: error.message })),
        Effect.catchDefect((defect) => Effect.fail(new SnapshotInvalid({ issues: `the snapshot could not be read: ${describeCause(defect)}` })))
      )
    }
    return Result.isSuccess(decoded) ? Effect.succeed(decoded.success) : Effect.fail(new SnapshotInvalid({ issues: decoded.failure.message }))
  })

const decodeValue = strictResultDecoder(RunSnapshotSchema as unknown as Schema.ConstraintCodec<RunSnapshot, unknown, never, never>)

/**
 * A snapshot from JSON text; `SnapshotInvalid` when it is not one.
 *
 * @example
 * ```ts
 * const snapshot = yield* decodeSnapshot(await readFile("run.json", "utf8"))
 * ```
 */
export const decodeSnapshot = (json: string): Effect.Effect<RunSnapshot, SnapshotInvalid> =>
  Effect.suspend(() => {
    // `JSON.parse` and the value's decoder (the fast path); the JSON-text decoder when either fails, so
    // a refusal reads exactly as Schema's own report on the text.
    if (typeof json === "string") {
      let parsed: unknown
      try {
        parsed = JSON.parse(json)
      } catch {
        return reportOn(json)
      }
      const decoded = decodeValue(parsed)
      if (Result.isSuccess(decoded)) return Effect.succeed(decoded.success)
    }
    return reportOn(json)
  })

const reportOn = (json: unknown): Effect.Effect<RunSnapshot, SnapshotInvalid> =>
  decodeJson(json, strictOptions).pipe(Effect.mapError((error) => new SnapshotInvalid({ issues: error.message })))
