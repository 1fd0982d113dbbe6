/**
 * Run snapshots: the complete state of a run between two steps (skill, transcript, pending tool calls,
 * budget ledger and counters, invalid-argument retries, the knowledge loaded so far), with the
 * definition's fingerprint, as a Schema with a JSON encoding. `resumeRun` continues a run from one, in
 * this process or another; a definition whose fingerprint differs is refused with `DefinitionChanged`.
 */
import { Effect, Schema } from "effect"
import { DefinitionChanged, SnapshotInvalid } from "../errors.ts"
import type { LlmMessage } from "../model/messages.ts"
import type { AgentPlan, SkillPlan } from "./plan.ts"
import type { RunContext, RunState } from "./run-context.ts"

const ToolCallSchema = Schema.Struct({ id: Schema.String, name: Schema.String, arguments: Schema.String })

const MessageSchema = Schema.Union([
  Schema.Struct({ role: Schema.Literals(["system", "user"]), content: Schema.String }),
  Schema.Struct({ role: Schema.Literal("assistant"), content: Schema.String, toolCalls: Schema.optionalKey(Schema.Array(ToolCallSchema)) }),
  Schema.Struct({ role: Schema.Literal("tool"), toolCallId: Schema.String, name: Schema.String, content: Schema.String })
])

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const LedgerSchema = Schema.Struct({
  turns: Count,
  toolCalls: Count,
  tokens: Schema.Finite,
  lastTool: Schema.optionalKey(Schema.String),
  consecutive: Count,
  thresholdsFired: Schema.Array(Schema.String)
})

const StateSchema = Schema.Struct({
  runId: Schema.String,
  input: Schema.String,
  skill: Schema.String,
  elapsedMs: Schema.Finite,
  transcript: Schema.Array(MessageSchema),
  pending: Schema.Array(ToolCallSchema),
  offered: Schema.Array(Schema.String),
  ledger: LedgerSchema,
  invalidArgsRetries: Schema.Record(Schema.String, Count),
  knowledge: Schema.Record(Schema.String, Schema.String)
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
  state: StateSchema
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
 * A snapshot from JSON text; `SnapshotInvalid` when it is not one.
 *
 * @example
 * ```ts
 * const snapshot = yield* decodeSnapshot(await readFile("run.json", "utf8"))
 * ```
 */
export const decodeSnapshot = (json: string): Effect.Effect<RunSnapshot, SnapshotInvalid> =>
  decodeJson(json, { errors: "all", onExcessProperty: "error" }).pipe(Effect.mapError((error) => new SnapshotInvalid({ issues: error.message })))

/** The snapshot of `ctx` at `now`. */
export const snapshotOf = (ctx: RunContext, now: number): RunSnapshot => {
  const state = ctx.state(now)
  const { lastTool, ...ledger } = state.ledger
  return {
    version: 1,
    agent: ctx.plan.name,
    fingerprint: ctx.plan.fingerprint(),
    state: { ...state, ledger: lastTool === undefined ? ledger : { ...ledger, lastTool } }
  }
}

/** The run state a snapshot holds, as the run context takes it. */
export const stateOf = (snapshot: RunSnapshot): RunState => ({
  ...snapshot.state,
  transcript: snapshot.state.transcript as ReadonlyArray<LlmMessage>,
  ledger: { ...snapshot.state.ledger, lastTool: snapshot.state.ledger.lastTool }
})

/** The skill to continue in, when the snapshot was taken with a definition of the same shape. */
export const checkSnapshot = (plan: AgentPlan, snapshot: RunSnapshot): Effect.Effect<SkillPlan, DefinitionChanged> => {
  const expected = plan.fingerprint()
  const refuse = (found: string, reason: string) => Effect.fail(new DefinitionChanged({ agent: plan.name, expected, found, reason }))
  if (snapshot.agent !== plan.name) return refuse(snapshot.agent, `the snapshot belongs to agent "${snapshot.agent}"`)
  if (snapshot.fingerprint !== expected) {
    return refuse(snapshot.fingerprint, `the definition changed since the snapshot (fingerprint ${snapshot.fingerprint}, now ${expected}): tools, parameters, skills or budget differ`)
  }
  const skill = plan.skillByName.get(snapshot.state.skill)
  return skill === undefined ? refuse(snapshot.fingerprint, `the snapshot's skill "${snapshot.state.skill}" does not exist`) : Effect.succeed(skill)
}
