/**
 * The built-in tools every agent has: `escalate(reason, severity)` and `throwException(reason)`. They
 * are registered on every agent (their handles come with the others in `.skills(...)`) but a model may
 * call them only in skills that list them. They are terminal tools: the loop ends the run on a call
 * (with `Escalated` or `ExceptionThrown`), the same way as `submit` ends it with the typed answer, so
 * their `run` is only what a direct caller outside an agent gets.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { tool } from "./tool.ts"

const outsideAgent = (name: string) => Effect.fail(new Error(`"${name}" ends an agent's run; it does nothing on its own`))

/** The severities of `escalate`; a model may write them in any case, and may leave them out (HIGH). */
export const severities = ["LOW", "MEDIUM", "HIGH", "CRITICAL"] as const

/**
 * Lets the model stop and ask for a human; the run ends with `Escalated`.
 *
 * @example
 * ```ts
 * agent("support").tools({ refund }).skills(({ refund, escalate }) => [skill("refunds").tools(refund, escalate)])
 * ```
 */
export const escalateTool = tool("escalate", {
  description: "Stop and hand the conversation to a human when you cannot or must not continue.",
  args: Schema.Struct({
    reason: Schema.String.annotate({ description: "why a human is needed" }),
    severity: Schema.optional(Schema.Literals(severities).annotate({ description: "how urgent it is (default HIGH)" }))
  }),
  run: () => outsideAgent("escalate")
})

/**
 * Lets the model stop the run with an error of its own; the run ends with `ExceptionThrown`.
 *
 * @example
 * ```ts
 * agent("parser").skills(({ throwException }) => [skill("parse").tools(throwException)])
 * ```
 */
export const throwExceptionTool = tool("throwException", {
  description: "Stop with an error when the request cannot be handled at all.",
  args: Schema.Struct({ reason: Schema.String.annotate({ description: "what went wrong" }) }),
  run: () => outsideAgent("throwException")
})

/** The built-in tools, keyed by name, as every agent starts with them. */
export const builtinTools = { escalate: escalateTool, throwException: throwExceptionTool } as const

/** Their type, the initial tool record of every agent. */
export type BuiltinTools = typeof builtinTools

/** True for the names of built-in tools. */
export const isBuiltinToolName = (name: string): boolean => name === escalateTool.name || name === throwExceptionTool.name
