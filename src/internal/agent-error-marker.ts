/**
 * Internal: the marker every documented error of this library carries on its prototype, so
 * `isAgentError` recognises them by identity (a registered symbol, shared across copies of the
 * package) rather than by a list of tag names that anyone's object could imitate. The classes that
 * carry it: every error in `src/errors.ts` and the composition errors in `src/compose/errors.ts`
 * (`test/hardening/errors-marker.test.ts` checks the latter).
 */

/** `Symbol.for`, so two copies of the package (say, ESM and a bundled one) agree on it. */
export const AgentErrorTypeId: unique symbol = Symbol.for("effect-agent-dsl/AgentError")

/** The marker's type: `true` under {@link AgentErrorTypeId}. */
export interface AgentErrorMarked {
  readonly [AgentErrorTypeId]: true
}

/** True for values carrying the marker. */
export const hasAgentErrorMarker = (u: unknown): u is AgentErrorMarked =>
  typeof u === "object" && u !== null && (u as Record<PropertyKey, unknown>)[AgentErrorTypeId] === true
