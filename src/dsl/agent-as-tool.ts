/**
 * An agent offered to another agent as a tool (`a.asTool({ name, description })`): the tool's argument
 * Schema is the agent's input Schema (an object Schema as is; any other input, text included, as
 * `{ input }`), and running the tool runs the agent as a child run: its events carry the calling run's
 * id as `parentRunId`, its `agent.run` span nests under the caller's `agent.tool` span, and its tokens
 * and tool calls are charged to the caller's budget (and every budget above it) while its own budget
 * still applies. A child without its own model uses the calling agent's.
 *
 * A child with a tool that may need approval makes the tool one that may too: when the child suspends,
 * the calling run suspends with it (its snapshot holds the child's), and one resume with the decisions
 * continues the child, then the caller. The child's `Suspended` value is never a tool result.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AgentConfigError, type AgentError } from "../errors.ts"
import { type AgentDefinition, mayNeedApproval } from "./agent-definition.ts"
import { ChildSuspension, registerChildAgent } from "./child-suspension.ts"
import type { Decisions } from "./decision.ts"
import type { RunSnapshot } from "./run-snapshot.ts"
import { type AnyTool, type Tool, tool } from "./tool.ts"
import type { ArgsSchema } from "./tool-parameters.ts"

/** Options of `asTool`. */
export interface AsToolOptions<Name extends string> {
  /** The tool's name, as the model sees it (1-64 letters, digits, `_` or `-`). */
  readonly name: Name
  /** What the agent does, for the calling model. Default: the agent's prompt. */
  readonly description?: string
  /** Generate an OpenAI strict-mode schema for the arguments. */
  readonly strict?: boolean
}

/**
 * The argument type of an agent used as a tool: its input when that is a plain object, else `{ input }`.
 *
 * @example
 * ```ts
 * type A = AsToolArgs<string> // { readonly input: string }
 * ```
 */
export type AsToolArgs<TInput> = TInput extends ReadonlyArray<any> | Date | ((...args: any) => any) ? { readonly input: TInput }
  : TInput extends object ? TInput
  : { readonly input: TInput }

/**
 * Builds the tool; `runEffect` runs the agent (it needs the caller's `ModelClientService` when the
 * agent has no model of its own, which the calling run always provides).
 *
 * @example
 * ```ts
 * const research = agentAsTool(definition, (input) => runner(definition, input), { name: "research" })
 * ```
 */
export const agentAsTool = <const Name extends string, TInput, TOutput>(
  definition: AgentDefinition,
  runEffect: (input: TInput) => Effect.Effect<TOutput, AgentError, any>,
  options: AsToolOptions<Name>,
  resume?: (snapshot: RunSnapshot, decisions: Decisions) => Effect.Effect<unknown, AgentError, any>
): Tool<Name, AsToolArgs<TInput>, TOutput> => {
  if (typeof options !== "object" || options === null) {
    throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "asTool(...) takes { name, description? }" })
  }
  const input = definition.input ?? Schema.String
  const direct = isObjectSchema(input)
  const args: ArgsSchema = direct
    ? input
    : Schema.Struct({ input: input.annotate({ description: `The input of agent "${definition.name}"` }) })
  const description = options.description ?? definition.prompt ?? `Runs agent "${definition.name}" and answers with its output`
  // A child that may suspend answers its output, or a ChildSuspension the calling run suspends on.
  const suspends = mayNeedApproval(definition) && resume !== undefined
  const settle = (result: unknown): unknown => {
    if (!suspends) return result
    const outcome = result as { readonly _tag: string; readonly output?: unknown; readonly pending?: any; readonly snapshot?: any }
    return outcome._tag === "Suspended" ? new ChildSuspension(outcome.pending, outcome.snapshot) : outcome.output
  }
  const made: AnyTool = tool(options.name, {
    description,
    args,
    ...(options.strict === true ? { strict: true } : {}),
    run: (decoded: any) => Effect.map(runEffect(direct ? decoded : decoded.input) as Effect.Effect<unknown, AgentError>, settle) as Effect.Effect<TOutput, AgentError>
  })
  if (!suspends) return made as Tool<Name, AsToolArgs<TInput>, TOutput>
  const gated = Object.freeze({ ...made, mayNeedApproval: true }) as AnyTool
  registerChildAgent(gated, { definition, resume: (snapshot, decisions) => Effect.map(resume(snapshot, decisions), settle) })
  return gated as Tool<Name, AsToolArgs<TInput>, TOutput>
}

/** An object Schema (a struct, or a class over one): its JSON Schema is an object, so it is the arguments as is. */
const isObjectSchema = (schema: Schema.Top): boolean => {
  try {
    const document = Schema.toJsonSchemaDocument(schema)
    const root = document.schema as { readonly type?: unknown; readonly $ref?: unknown }
    const resolved = typeof root.$ref === "string"
      ? (document.definitions as Record<string, { readonly type?: unknown }>)[root.$ref.replace(/^#\/\$defs\//, "")]
      : root
    return resolved?.type === "object"
  } catch {
    return false
  }
}
