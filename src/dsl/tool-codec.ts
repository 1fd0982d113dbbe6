/**
 * A tool's argument codec: everything between the model's raw arguments and the typed args `run`
 * receives, owned by the tool. One `decode(raw)`: parse the JSON text (`""` is `{}`), decode with the
 * Schema, and, when the tool opted into repair, repair and decode again, reporting the corrections.
 * The loop never decodes, parses or repairs arguments itself.
 */
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { type ArgsCorrection, repairArguments, type RepairOptions } from "./repair-arguments.ts"
import type { ArgsSchema, ToolParameters } from "./tool-parameters.ts"

/** The outcome of decoding raw arguments. */
export type ArgsDecoding<Args> =
  | {
    readonly _tag: "Valid"
    readonly args: Args
    /** What a repair changed (empty when nothing was). */
    readonly corrections: ReadonlyArray<ArgsCorrection>
  }
  | {
    readonly _tag: "Invalid"
    /** The decoder's readable report, one issue per line with its path. */
    readonly issues: string
    /** The arguments as sent, parsed from JSON (the text itself when it is not JSON). */
    readonly value: unknown
  }

/**
 * How a tool reads its arguments.
 *
 * @example
 * ```ts
 * add.codec.decode('{"a":1,"b":2}') // { _tag: "Valid", args: { a: 1, b: 2 }, corrections: [] }
 * add.codec.check({ a: 1 })         // Result.fail("Missing key\n  at [\"b\"]")
 * ```
 */
export interface ArgsCodec<Args> {
  /** False only for tools declared with `unsafeNoSchema`: their calls are marked `validated: false`. */
  readonly validated: boolean
  /** The `unsafeNoSchema` mode, for tools declared so. */
  readonly unsafe: "read-only" | "human-approval" | "full" | undefined
  /** The argument Schema (undefined for `unsafeNoSchema` tools). */
  readonly schema: ArgsSchema | undefined
  /** Between decoded args and the JSON a model sends (strict mode: optional keys as null). */
  readonly json: Schema.ConstraintCodec<Args, unknown, never, never> | undefined
  /** The repairs the tool opted into. */
  readonly repair: RepairOptions | undefined
  /**
   * Decodes raw arguments: the JSON text a model sent, or a value (arguments a recovery handler
   * fixed). With `repair: false` (for fixed arguments: a fix is never repaired), no repair is tried.
   */
  readonly decode: (raw: unknown, options?: { readonly repair?: boolean }) => ArgsDecoding<Args>
  /** `decode` without repair, as a Result: the plain Schema check. */
  readonly check: (raw: unknown) => Result.Result<Args, string>
}

/** Parses JSON text, leaving text that is not JSON (and values that are not text) as they are. */
export const parseLoosely = (raw: unknown): unknown => {
  if (typeof raw !== "string") return raw
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

/** The codec of a tool with an argument Schema. */
export const schemaCodec = <Args>(
  schema: ArgsSchema,
  parameters: ToolParameters<Args>,
  repair: RepairOptions | undefined
): ArgsCodec<Args> => {
  const check = parameters.decode
  const decode = (raw: unknown, options?: { readonly repair?: boolean }): ArgsDecoding<Args> => {
    const first = check(raw)
    if (Result.isSuccess(first)) return { _tag: "Valid", args: first.success, corrections: [] }
    const invalid: ArgsDecoding<Args> = { _tag: "Invalid", issues: first.failure, value: parseLoosely(raw) }
    if (repair === undefined || options?.repair === false) return invalid
    const repaired = repairArguments(schema.ast, raw, repair)
    if (repaired.corrections.length === 0) return invalid
    const again = check(repaired.value)
    // A repair can make a call valid, never let an invalid one through: the original report stands.
    return Result.isSuccess(again) ? { _tag: "Valid", args: again.success, corrections: repaired.corrections } : invalid
  }
  return { validated: true, unsafe: undefined, schema, json: parameters.codec, repair, decode, check }
}

/** The codec of an `unsafeNoSchema` tool: parsed JSON (or the text), never refused. */
export const unsafeCodec = (mode: "read-only" | "human-approval" | "full"): ArgsCodec<unknown> => ({
  validated: false,
  unsafe: mode,
  schema: undefined,
  json: undefined,
  repair: undefined,
  decode: (raw) => ({ _tag: "Valid", args: parseLoosely(raw), corrections: [] }),
  check: (raw) => Result.succeed(parseLoosely(raw))
})
