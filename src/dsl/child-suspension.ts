/**
 * A child run that suspended: what an agent used as a tool answers, instead of a result, when the
 * child waits for a human decision. The calling run never shows it to its model: it suspends in turn,
 * its snapshot holding the child's, and its resume continues the child with the decisions meant for
 * it (`runtime/child-runs.ts`). The registry tells the runtime how to resume the child of such a tool.
 */
import type * as Effect from "effect/Effect"
import type { AgentError } from "../errors.ts"
import type { Decisions } from "./decision.ts"
import type { AgentDefinition } from "./agent-definition.ts"
import type { RunSnapshot } from "./run-snapshot.ts"
import type { AnyTool } from "./tool.ts"

/** A waiting call of a child run, as its `Suspended` lists it. */
export interface ChildWaitingCall {
  readonly id: string
  readonly tool: string
  readonly args: unknown
  readonly reason?: string
}

/**
 * The answer of an agent-as-tool whose child run suspended.
 *
 * @example
 * ```ts
 * if (result instanceof ChildSuspension) console.log(result.pending.map((p) => p.id))
 * ```
 */
export class ChildSuspension {
  constructor(readonly pending: ReadonlyArray<ChildWaitingCall>, readonly snapshot: RunSnapshot) {}
}

/** How to continue the child run of an agent-as-tool from its snapshot. */
export interface ChildAgent {
  readonly definition: AgentDefinition
  /** Resumes the child; its answer is its output, or a `ChildSuspension` again. */
  readonly resume: (snapshot: RunSnapshot, decisions: Decisions) => Effect.Effect<unknown, AgentError, any>
}

const children = new WeakMap<AnyTool, ChildAgent>()

/**
 * Records that `tool` runs the agent of `child` (the builder's `asTool` does).
 *
 * @example
 * ```ts
 * registerChildAgent(made, { definition, resume })
 * ```
 */
export const registerChildAgent = (tool: AnyTool, child: ChildAgent): void => {
  children.set(tool, child)
}

/**
 * The agent a tool runs, when it is an agent used as a tool whose run may suspend.
 *
 * @example
 * ```ts
 * const child = childAgentOf(tool)
 * ```
 */
export const childAgentOf = (tool: AnyTool): ChildAgent | undefined => children.get(tool)
