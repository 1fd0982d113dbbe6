/**
 * Which composite run a run belongs to. A composite sets it for its children, so their events and spans
 * can name the parent run; a top-level run has none.
 */
import { Context } from "effect"

/**
 * The run id of the enclosing composite run, if any.
 *
 * @example
 * ```ts
 * const parent = yield* ParentRun // undefined at the top level
 * ```
 */
export const ParentRun = Context.Reference<string | undefined>("effect-agent-dsl/ParentRun", {
  defaultValue: () => undefined
})
