/**
 * Checking a resume without running it: the decisions given for a suspended run are validated against
 * its snapshot (signature, definition, every decision bound to its exact pending call, edits decoded by
 * the tool's Schema, children and handoff targets included) and nothing runs. A composite that resumes
 * several members at once (a parallel, a forum's participants) checks every member this way before any
 * of them continues, so one member's approved tool never runs before another member's bad edit is
 * refused. The builder carries the check under `ResumeCheck`; the package entry injects the runtime's.
 */
import type * as Effect from "effect/Effect"
import type { AgentError } from "../errors.ts"
import type { AgentDefinition } from "./agent-definition.ts"
import type { Decisions } from "./decision.ts"

/** The key under which a built agent carries its resume check. */
export const ResumeCheck = Symbol.for("effect-agent-dsl/ResumeCheck")

/**
 * Validates `decisions` against `snapshot` for a run of `definition`, running nothing (`checkResumeAgent`).
 *
 * @example
 * ```ts
 * const check: AgentResumeChecker = (definition, snapshot, decisions) => Effect.void
 * ```
 */
export type AgentResumeChecker = (definition: AgentDefinition, snapshot: unknown, decisions: Decisions) => Effect.Effect<void, AgentError>

/**
 * The resume check a built agent carries, if its factory was given one.
 *
 * @example
 * ```ts
 * const check = resumeCheckOf(bank)
 * if (check !== undefined) yield* check(snapshot, { k1: Decision.approve })
 * ```
 */
export const resumeCheckOf = (value: unknown): ((snapshot: unknown, decisions: Decisions) => Effect.Effect<void, AgentError>) | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const check = (value as { readonly [ResumeCheck]?: unknown })[ResumeCheck]
  return typeof check === "function" ? (check as (snapshot: unknown, decisions: Decisions) => Effect.Effect<void, AgentError>) : undefined
}
