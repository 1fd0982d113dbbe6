/**
 * The Schemas a durable run records its steps with: a model's answer (`LlmResponseSchema`), a run's
 * error (`AgentErrorSchema`, which `ModelError` is one of), a tool execution's outcome
 * (`ToolOutcomeSchema`) and the human decisions on waiting calls (`DecisionsSchema`). Each encodes to
 * JSON, which is what an engine stores; what a replay reads back is the decoded value, and so is what
 * the first execution goes on with, so both see the same thing.
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import {
  AgentConfigError,
  Cancelled,
  type AgentError,
  BudgetExceeded,
  DecisionsInvalid,
  DefinitionChanged,
  Escalated,
  ExceptionThrown,
  InputInvalid,
  InvalidToolArgs,
  isAgentError,
  ModelError,
  NoSkillMatched,
  OutcomeUnknown,
  OutputInvalid,
  RuntimeDefect,
  SessionStoreFailed,
  SkillFailed,
  SkillRoutingFailed,
  SnapshotInvalid,
  SnapshotRejected,
  ToolFailed,
  ToolNotAllowed
} from "../errors.ts"
import type { LlmResponse } from "../model/messages.ts"
import { ReasoningPartSchema, ToolCallSchema } from "../model/message-schemas.ts"


const UsageSchema = Schema.Struct({
  inputTokens: Schema.Finite,
  outputTokens: Schema.Finite,
  cachedInputTokens: Schema.optionalKey(Schema.Finite),
  reasoningTokens: Schema.optionalKey(Schema.Finite)
})


const meta = {
  usage: Schema.optionalKey(UsageSchema),
  finishReason: Schema.optionalKey(Schema.Literals(["stop", "tool-calls", "length", "content-filter", "refusal", "other"])),
  reasoning: Schema.optionalKey(Schema.Array(ReasoningPartSchema)),
  responseId: Schema.optionalKey(Schema.String),
  responseModel: Schema.optionalKey(Schema.String)
}

/**
 * A model's answer, as the loop acts on it (`LlmResponse`).
 *
 * @example
 * ```ts
 * const json = Schema.encodeSync(Schema.toCodecJson(LlmResponseSchema))({ _tag: "Text", content: "4" })
 * ```
 */
export const LlmResponseSchema: Schema.Codec<LlmResponse, unknown> = Schema.Union([
  Schema.Struct({ _tag: Schema.Literal("Text"), content: Schema.String, ...meta }),
  Schema.Struct({ _tag: Schema.Literal("ToolCalls"), calls: Schema.Array(ToolCallSchema), content: Schema.optionalKey(Schema.String), ...meta })
]) as unknown as Schema.Codec<LlmResponse, unknown>

/** Every error class a run can end with, by tag: how a recorded error is rebuilt. */
const errorClasses: Readonly<Record<string, new(fields: any) => AgentError>> = {
  AgentConfigError,
  InputInvalid,
  NoSkillMatched,
  SkillRoutingFailed,
  ToolNotAllowed,
  InvalidToolArgs,
  ToolFailed,
  SkillFailed,
  BudgetExceeded,
  ModelError,
  OutputInvalid,
  Escalated,
  ExceptionThrown,
  RuntimeDefect,
  DefinitionChanged,
  SnapshotInvalid,
  SnapshotRejected,
  DecisionsInvalid,
  SessionStoreFailed,
  OutcomeUnknown,
  Cancelled
}

/** Fields that hold a cause (any value): recorded as Effect records defects (an Error as its name and message). */
const causeFields: ReadonlySet<string> = new Set(["cause", "error"])

const defect = Schema.Defect()
const encodeDefect = Schema.encodeSync(defect)
const decodeDefect = Schema.decodeSync(defect)

const toJson = (value: unknown): Schema.Json => {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? null : (JSON.parse(text) as Schema.Json)
  } catch {
    return encodeDefect(value)
  }
}

const RecordedError = Schema.Struct({ _tag: Schema.String, fields: Schema.Record(Schema.String, Schema.Json) })

const fieldsOf = (error: AgentError): Record<string, Schema.Json> => {
  const fields: Record<string, Schema.Json> = {}
  for (const [key, value] of Object.entries(error)) {
    if (key === "_tag" || value === undefined) continue
    fields[key] = causeFields.has(key) ? encodeDefect(value) : toJson(value)
  }
  return fields
}

const rebuild = (recorded: typeof RecordedError.Type): AgentError => {
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(recorded.fields)) fields[key] = causeFields.has(key) ? decodeDefect(value) : value
  const make = errorClasses[recorded._tag]
  return make === undefined
    ? new RuntimeDefect({ agent: String(fields.agent ?? "(unknown)"), cause: new Error(`a recorded error of unknown kind "${recorded._tag}"`) })
    : new make(fields)
}

/**
 * Any `AgentError`, recorded as its tag and its fields as JSON and rebuilt as an instance of the same
 * class (a `cause` keeps an Error's name and message).
 *
 * @example
 * ```ts
 * const encoded = Schema.encodeSync(AgentErrorSchema)(new ModelError({ provider: "p", reason: "down" }))
 * ```
 */
export const AgentErrorSchema: Schema.Codec<AgentError, typeof RecordedError.Encoded> = RecordedError.pipe(
  Schema.decodeTo(
    Schema.declare(isAgentError, { expected: "AgentError" }),
    SchemaTransformation.transform<AgentError, typeof RecordedError.Type>({
      decode: rebuild,
      encode: (error) => ({ _tag: error._tag, fields: fieldsOf(error) })
    })
  )
)

/**
 * A `ModelError`, recorded as `AgentErrorSchema` records it.
 *
 * @example
 * ```ts
 * Activity.make({ name: "model/1", success: LlmResponseSchema, error: ModelErrorSchema, execute })
 * ```
 */
export const ModelErrorSchema: Schema.Codec<ModelError, typeof RecordedError.Encoded> = AgentErrorSchema as unknown as Schema.Codec<
  ModelError,
  typeof RecordedError.Encoded
>

/**
 * What one tool execution gave: its result as JSON, or its failure as a defect (an Error keeps its
 * name and message). A tool result that is not JSON (`undefined`, a Date) is recorded as
 * `JSON.stringify` would render it, which is all the model ever sees of it.
 *
 * @example
 * ```ts
 * const outcome: ToolOutcome = { _tag: "Succeeded", value: { total: 3 } }
 * ```
 */
export const ToolOutcomeSchema = Schema.Union([
  Schema.Struct({ _tag: Schema.Literal("Succeeded"), value: Schema.Json }),
  Schema.Struct({ _tag: Schema.Literal("Failed"), error: Schema.Defect() })
])

/** See {@link ToolOutcomeSchema}. */
export type ToolOutcome = typeof ToolOutcomeSchema.Type

/**
 * One recorded tool execution: its outcome, and what the runs it started (an agent called as a tool)
 * charged to the run's budget, which a replay charges again.
 *
 * @example
 * ```ts
 * const recorded: ToolExecution = { outcome: { _tag: "Succeeded", value: "4" }, charged: { tokens: 120, toolCalls: 1 } }
 * ```
 */
export const ToolExecutionSchema = Schema.Struct({
  outcome: ToolOutcomeSchema,
  charged: Schema.Struct({ tokens: Schema.Finite, toolCalls: Schema.Finite })
})

/** See {@link ToolExecutionSchema}. */
export type ToolExecution = typeof ToolExecutionSchema.Type

/** The result of a tool as JSON (see {@link ToolOutcomeSchema}). */
export const resultAsJson = (value: unknown): Schema.Json => toJson(value)

const DecisionSchema = Schema.Union([
  Schema.Struct({ _tag: Schema.Literal("Approve") }),
  Schema.Struct({ _tag: Schema.Literal("Deny"), reason: Schema.String }),
  Schema.Struct({ _tag: Schema.Literal("Edit"), args: Schema.Json })
])

/**
 * The decisions on the calls a durable run waits for, by call id (`Decision.approve`, `deny`,
 * `edit` with JSON arguments).
 *
 * @example
 * ```ts
 * Schema.decodeUnknownSync(DecisionsSchema)({ call_1: { _tag: "Approve" } })
 * ```
 */
export const DecisionsSchema = Schema.Record(Schema.String, DecisionSchema)
