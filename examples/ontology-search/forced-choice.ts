/**
 * Forced tool choice for `submit_slots`, in the DSL's own terms. Seed 000 forces its output tool with
 * the investigation tools still offered; the library says that directly: `outputToolName(Submission,
 * "submit_slots")` names the typed-answer tool, and `.toolChoice("output")` forces it on every turn
 * (`"always"`, the seed's setting) or `.toolChoice({ lastTurn: "output", otherTurns: "required" })` only
 * on the last turn `maxTurns` allows (`"last-step"`: investigate first, never run out of steps first).
 */
import type { ToolChoicePolicy } from "effect-agent-dsl"

/** The tool name the model sees. */
export const SUBMIT_SLOTS = "submit_slots"

/** When `submit_slots` is forced. */
export type ForcePolicy = "always" | "last-step"

/**
 * The agent's tool-choice policy for a force policy.
 *
 * @example
 * ```ts
 * agent("search", { output: outputToolName(Submission, SUBMIT_SLOTS) }).toolChoice(submitSlotsChoice("last-step"))
 * ```
 */
export const submitSlotsChoice = (policy: ForcePolicy = "always"): ToolChoicePolicy<never> =>
  policy === "always" ? "output" : { lastTurn: "output", otherTurns: "required" }
