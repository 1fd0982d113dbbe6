/**
 * Internal: the `error.type` a failed span reports (OpenTelemetry's conventions), read by every layer
 * that makes spans. Re-exported by `runtime/gen-ai-spans.ts`.
 */
import * as Cause from "effect/Cause"

/** `error.type` of one error: a tagged error's `_tag`, else its class name, else `_OTHER`. */
export const errorTypeOfError = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const tag = (error as { readonly _tag?: unknown })._tag
    if (typeof tag === "string" && tag.length > 0) return tag
    const name = (error as { readonly name?: unknown }).name
    if (typeof name === "string" && name.length > 0 && name !== "Error") return name
  }
  return "_OTHER"
}

/**
 * `error.type` of a failed operation: a tagged error's `_tag` (`ModelError`, `BudgetExceeded`, ...),
 * else the error's class name, else `_OTHER` as the conventions say; undefined for an interruption,
 * which is no error of the operation.
 */
export const errorTypeOf = (cause: Cause.Cause<unknown>): string | undefined =>
  Cause.hasInterruptsOnly(cause) ? undefined : errorTypeOfError(Cause.squash(cause))
