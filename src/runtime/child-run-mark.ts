/**
 * The mark of a child run's parts in the AI SDK UI message stream (an agent called as a tool, and its
 * own children): `providerMetadata` of its texts and reasoning, `toolMetadata` of its tool parts hold
 * `{ "effect-agent-dsl": { childRun, agent } }`. The stream writes it (`eventStreamResponse`); the
 * web entry reads it back (`fromUIMessages`) to leave a child's parts out of its parent's transcript.
 *
 * @example
 * ```ts
 * part.providerMetadata?.[childRunKey] // { childRun: "run_…", agent: "researcher" } on a child's text
 * ```
 */
export const childRunKey = "effect-agent-dsl"

/** The mark of one child run's parts. */
export type ChildRunMark = { readonly [childRunKey]: { readonly childRun: string; readonly agent: string } }
