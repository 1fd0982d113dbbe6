/**
 * Recovery decisions: what the loop does when a model sends invalid arguments or a tool fails.
 */

/**
 * One decision:
 * - `feedback`: the model gets the error as the tool's result and may correct itself (the default);
 *   the next model call counts against the budget.
 * - `fail`: the run ends with `InvalidToolArgs` or `ToolFailed`.
 * - `substitute(value)`: the model gets `value` as the tool's result, as if the tool had returned it.
 */
export type Recovery =
  | { readonly _tag: "Feedback" }
  | { readonly _tag: "Fail" }
  | { readonly _tag: "Substitute"; readonly value: unknown }

/**
 * The recovery decisions.
 *
 * @example
 * ```ts
 * agent("calc").onError({ invalidArgs: ({ tool }) => tool === "add" ? Recovery.fail : Recovery.feedback })
 * ```
 */
export const Recovery = {
  feedback: { _tag: "Feedback" } as Recovery,
  fail: { _tag: "Fail" } as Recovery,
  substitute: (value: unknown): Recovery => ({ _tag: "Substitute", value })
} as const
