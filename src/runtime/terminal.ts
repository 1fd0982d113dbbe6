/**
 * Terminal tools: the calls that end a run (or, for routing, a step) instead of producing a tool
 * result. `submit` (a typed answer), the built-in `escalate` and `throwException`, and `choose_skill`
 * (the routing call) and `handoff_to_<agent>` are all one shape: a tool definition for the model, a decoder for the arguments,
 * and `finish`, which says what the decoded call means. The loop handles them in one place.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type AgentDefinition, handoffToolName, submitToolName } from "../dsl/agent-definition.ts"
import { escalateTool, severities, throwExceptionTool } from "../dsl/builtin-tools.ts"
import { type AnyTool, tool } from "../dsl/tool.ts"
import { toolParameters } from "../dsl/tool-parameters.ts"
import { Escalated, ExceptionThrown } from "../errors.ts"
import type { ToolDefinition } from "../model/messages.ts"
import { type OutputContract } from "./output-contract.ts"

/** What a terminal call means once its arguments decoded. */
export type Finish =
  | { readonly _tag: "Output"; readonly value: unknown }
  | { readonly _tag: "Fail"; readonly error: Escalated | ExceptionThrown }
  | { readonly _tag: "Route"; readonly skill: string }
  | { readonly _tag: "Handoff"; readonly target: AgentDefinition }

/** Where a terminal call happened, for the errors it ends with. */
export interface TerminalScope {
  readonly agent: string
  readonly skill: string
}

export interface Terminal {
  readonly name: string
  readonly definition: ToolDefinition
  /** Decodes the model's JSON text; a failure is a readable report. */
  readonly decode: (raw: string) => Result.Result<unknown, string>
  readonly finish: (args: unknown, scope: TerminalScope) => Finish
}

const decoderOf = (tool: AnyTool) => tool.codec.check

/** `submit`: the typed answer. */
export const submitTerminal = (output: OutputContract): Terminal | undefined =>
  output.submitTool === undefined ? undefined : {
    name: submitToolName,
    definition: output.submitTool,
    decode: output.decodeSubmission,
    finish: (value) => ({ _tag: "Output", value })
  }

// As the Kotlin reference: `severity` optional (default HIGH) and in any case ("high", "Critical").
// Made on the first escalation, not with the package (its JSON Schema is part of a cold start otherwise).
let lenientEscalation: ((raw: unknown) => Result.Result<unknown, string>) | undefined

const decodeEscalation = (raw: string): Result.Result<unknown, string> => {
  lenientEscalation ??= toolParameters(Schema.Struct({ reason: Schema.String, severity: Schema.optional(Schema.String) }), { strict: false }).decode
  const decoded = lenientEscalation(raw)
  if (Result.isFailure(decoded)) return decoded
  const { reason, severity } = decoded.success as { readonly reason: string; readonly severity?: string }
  const normalised = (severity ?? "HIGH").trim().toUpperCase()
  if (!(severities as ReadonlyArray<string>).includes(normalised)) {
    return Result.fail(`severity: expected one of ${severities.join(", ")} (any case), got ${JSON.stringify(severity)}`)
  }
  return Result.succeed({ reason, severity: normalised })
}

/** The built-in `escalate` and `throwException`, by name. */
export const builtinTerminals: ReadonlyMap<string, Terminal> = new Map<string, Terminal>([
  [escalateTool.name, {
    name: escalateTool.name,
    definition: escalateTool.definition,
    decode: decodeEscalation,
    finish: (args, scope) => {
      const { reason, severity } = args as { readonly reason: string; readonly severity: Escalated["severity"] }
      return { _tag: "Fail", error: new Escalated({ ...scope, reason, severity }) }
    }
  }],
  [throwExceptionTool.name, {
    name: throwExceptionTool.name,
    definition: throwExceptionTool.definition,
    decode: decoderOf(throwExceptionTool),
    finish: (args, scope) => ({ _tag: "Fail", error: new ExceptionThrown({ ...scope, reason: (args as { readonly reason: string }).reason }) })
  }]
])

/** The name of the routing call. */
export const chooseSkillName = "choose_skill"

const routers = new Map<string, Terminal>()

/**
 * `choose_skill` over candidate skill names: built once per list of names (its JSON Schema and
 * decoder are compiled then), not on every routed run.
 */
export const routingTerminal = (names: ReadonlyArray<string>): Terminal => {
  const key = JSON.stringify(names)
  const cached = routers.get(key)
  if (cached !== undefined) return cached
  const args = Schema.Struct({ skill: Schema.Literals(names).annotate({ description: "the name of the chosen skill" }) })
  const { jsonSchema, decode } = toolParameters(args, { strict: false })
  const terminal: Terminal = {
    name: chooseSkillName,
    definition: Object.freeze({
      type: "function",
      name: chooseSkillName,
      description: "Choose the skill that should handle the user's request.",
      parameters: jsonSchema
    }),
    decode,
    finish: (decoded) => ({ _tag: "Route", skill: (decoded as { readonly skill: string }).skill })
  }
  routers.set(key, terminal)
  return terminal
}

const handoffs = new WeakMap<AgentDefinition, { readonly tool: AnyTool; readonly terminal: Terminal }>()

/**
 * `handoff_to_<agent>`: hands the conversation to `target` (any arguments are ignored). The tool is
 * what the model is offered; it never executes, the loop settles it as a terminal.
 */
export const handoffTerminal = (target: AgentDefinition): { readonly tool: AnyTool; readonly terminal: Terminal } => {
  const cached = handoffs.get(target)
  if (cached !== undefined) return cached
  const name = handoffToolName(target.name)
  const description = `Hand the conversation to agent "${target.name}"${target.prompt === undefined ? "" : `: ${target.prompt}`}`
  const handoffTool = tool(name, {
    description: description.slice(0, 1024),
    args: Schema.Struct({}),
    run: () => Effect.die(new Error(`internal: the handoff "${name}" is settled by the loop, never executed`))
  })
  const made = {
    tool: handoffTool,
    terminal: {
      name,
      definition: handoffTool.definition,
      decode: () => Result.succeed({}),
      finish: () => ({ _tag: "Handoff" as const, target })
    }
  }
  handoffs.set(target, made)
  return made
}
