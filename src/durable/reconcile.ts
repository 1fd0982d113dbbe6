/**
 * Reconciliation of a `mutating` tool call whose outcome was lost with a crashed worker. The
 * `reconcile` handler of `durable(agent, { reconcile })` gets the `OutcomeUnknown` (run, tool, call id,
 * arguments), looks at the world (the payment provider, the database) and says what happened:
 * `Reconciled.result(value)` (the call did run: record this as its result), `Reconciled.runAgain`
 * (it did not: run it now) or `Reconciled.fail(reason)` (end the run with `OutcomeUnknown`). Without
 * a handler, or when the handler fails, the run ends with `OutcomeUnknown`.
 */
import * as Effect from "effect/Effect"
import { OutcomeUnknown } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"

/** What a reconcile handler found out about a call whose outcome was unknown. */
export type Reconciled =
  | { readonly _tag: "Result"; readonly value: unknown }
  | { readonly _tag: "RunAgain" }
  | { readonly _tag: "Fail"; readonly reason: string }

/**
 * The answers of a reconcile handler.
 *
 * @example
 * ```ts
 * const reconcile = (u: OutcomeUnknown) =>
 *   Effect.map(findPayment(u.toolCallId), (found) => found ? Reconciled.result(found.receipt) : Reconciled.runAgain)
 * ```
 */
export const Reconciled = {
  /** The call ran: `value` is recorded as its result. */
  result: (value: unknown): Reconciled => ({ _tag: "Result", value }),
  /** The call did not run: run it now. */
  runAgain: { _tag: "RunAgain" } as Reconciled,
  /** The outcome stays unknown: end the run with `OutcomeUnknown` and this reason. */
  fail: (reason: string): Reconciled => ({ _tag: "Fail", reason: String(reason) })
} as const

/**
 * A reconcile handler: called inside the call's activity, so it may run again if its worker dies too.
 *
 * @example
 * ```ts
 * const reconcile: Reconcile = (unknown) => Effect.succeed(Reconciled.fail(`check ${unknown.toolCallId} by hand`))
 * ```
 */
export type Reconcile = (unknown: OutcomeUnknown) => Effect.Effect<Reconciled, unknown>

type Settled = { readonly _tag: "Result"; readonly value: unknown } | { readonly _tag: "RunAgain" }

/** What the run does with an unknown outcome: a result to record, or a run now; else it fails. */
export const reconcileUnknown = (
  unknown: OutcomeUnknown,
  reconcile: Reconcile | undefined
): Effect.Effect<Settled, OutcomeUnknown> => {
  if (reconcile === undefined) return Effect.fail(unknown)
  const failWith = (reason: string) => new OutcomeUnknown({ ...unknown, reason })
  return Effect.suspend(() => reconcile(unknown)).pipe(
    Effect.catchCause((cause) => Effect.fail(failWith(`the reconcile handler failed: ${describeCause(cause)}`))),
    Effect.flatMap((answer: Reconciled | undefined): Effect.Effect<Settled, OutcomeUnknown> => {
      switch (answer?._tag) {
        case "Result":
          return Effect.succeed({ _tag: "Result", value: answer.value })
        case "RunAgain":
          return Effect.succeed({ _tag: "RunAgain" })
        case "Fail":
          return Effect.fail(failWith(answer.reason))
        default:
          return Effect.fail(failWith("the reconcile handler answered neither Reconciled.result, runAgain nor fail"))
      }
    })
  )
}
