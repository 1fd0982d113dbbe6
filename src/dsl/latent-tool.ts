/**
 * Latent tools: tools that are pure schemas. A latent tool has an argument Schema and an output
 * Schema but no `run`: the model performs the step itself and writes both the arguments and the
 * output in its call (`{ "args": …, "output": … }`). The call is decoded like any tool call, the output
 * with the output Schema, so a malformed output is routed like invalid arguments (feedback with paths,
 * recovery handlers); the decoded output is the tool's result, seen by hooks, spans and the transcript.
 * Use them to make a model's intermediate judgements (a classification, an extraction, a plan) typed
 * and observable without writing code for them.
 */
import * as Schema from "effect/Schema"
import type { RecoveryHandlers } from "./recovery.ts"
import { type Tool, tool } from "./tool.ts"
import type { ArgsSchema } from "./tool-parameters.ts"

/** What a latent tool's call carries: the arguments and the output the model produced for them. */
export interface LatentCall<Args, Output> {
  readonly args: Args
  readonly output: Output
}

/** Options of {@link latentTool}. */
export interface LatentToolOptions<A extends ArgsSchema, O extends ArgsSchema, Name extends string> {
  readonly description?: string
  readonly args: A
  readonly output: O
  readonly tags?: ReadonlyArray<string>
  /** Recovery handlers for this tool's calls, as `tool(...)`'s `recover`. */
  readonly recover?: RecoveryHandlers<Name>
  readonly strict?: boolean
}

/**
 * Defines a latent tool: the model executes it by producing its output.
 *
 * @example
 * ```ts
 * const classify = latentTool("classify", {
 *   description: "Classify a support ticket",
 *   args: Schema.Struct({ ticket: Schema.String }),
 *   output: Schema.Struct({ category: Schema.Literals(["billing", "bug", "other"]), urgent: Schema.Boolean })
 * })
 * ```
 */
export const latentTool = <const Name extends string, A extends ArgsSchema, O extends ArgsSchema>(
  name: Name,
  options: LatentToolOptions<A, O, Name>
): Tool<Name, LatentCall<A["Type"], O["Type"]>, O["Type"]> => {
  const description = [
    options.description === undefined || /[.!?]$/.test(options.description) ? options.description : `${options.description}.`,
    "You perform this step yourself: put the arguments in \"args\" and the result you produce for them in \"output\"."
  ].filter((d) => d !== undefined).join(" ")
  return tool(name, {
    description,
    args: Schema.Struct({ args: options.args, output: options.output }),
    run: (call) => (call as { readonly output: unknown }).output,
    tags: ["latent", ...(options.tags ?? [])],
    ...(options.recover === undefined ? {} : { recover: options.recover }),
    // An untyped caller's `onError` goes on to `tool(...)`, which refuses it naming `recover`.
    ...((options as { readonly onError?: unknown }).onError === undefined ? {} : { onError: (options as { readonly onError?: unknown }).onError }),
    ...(options.strict === undefined ? {} : { strict: options.strict })
  }) as unknown as Tool<Name, LatentCall<A["Type"], O["Type"]>, O["Type"]>
}
