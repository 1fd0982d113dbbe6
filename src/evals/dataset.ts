/**
 * Datasets: the cases an evaluation runs, from an array or from JSON Lines. A case has an `id` (given,
 * or `case-<n>`), an `input` for the agent, optionally the `expected` answer, the `tools` it is expected
 * to call (for `toolTrajectory`) and `tags`. JSON Lines are decoded with optional Schemas for the
 * input and the expected answer, so a malformed line is a `DatasetError` naming its line, never a
 * case that fails mysteriously later.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { lazyPackage } from "../internal/lazy-package.ts"

/** A tool call a case expects: the tool's name and, optionally, its (decoded) arguments. */
export interface ExpectedToolCall {
  readonly tool: string
  readonly args?: unknown
}

/** One case of a dataset. */
export interface EvalCase<I, E = unknown> {
  readonly id: string
  readonly input: I
  readonly expected?: E
  /** The tool calls expected, in order (see `toolTrajectory`). */
  readonly tools?: ReadonlyArray<ExpectedToolCall>
  readonly tags?: ReadonlyArray<string>
}

/** A case as written: `id` may be left out. */
export type EvalCaseInit<I, E = unknown> = Omit<EvalCase<I, E>, "id"> & { readonly id?: string }

/** A named list of cases with unique ids. */
export interface Dataset<I, E = unknown> {
  readonly name: string
  readonly cases: ReadonlyArray<EvalCase<I, E>>
}

/**
 * A dataset could not be built: a malformed JSON line, a case its Schema refuses, a duplicate id, or a
 * file that cannot be read. `line` is 1-based when the problem is on one line.
 *
 * @example
 * ```ts
 * Effect.catchTag(loadJsonl("cases.jsonl"), "DatasetError", (e) => Effect.die(e.message))
 * ```
 */
export class DatasetError extends Data.TaggedError("DatasetError")<{
  readonly source: string
  readonly reason: string
  readonly line?: number
}> {
  override get message(): string {
    return `Dataset ${this.source}${this.line === undefined ? "" : ` line ${this.line}`}: ${this.reason}`
  }
}

/** `lines[i]`: the 1-based line of case i in its file (blank lines counted); by default its position. */
const withIds = <I, E>(source: string, cases: ReadonlyArray<EvalCaseInit<I, E>>, lines?: ReadonlyArray<number>): Effect.Effect<Array<EvalCase<I, E>>, DatasetError> =>
  Effect.suspend(() => {
    const seen = new Set<string>()
    const out: Array<EvalCase<I, E>> = []
    for (const [i, c] of cases.entries()) {
      const id = c.id ?? `case-${i + 1}`
      if (seen.has(id)) return Effect.fail(new DatasetError({ source, reason: `duplicate case id "${id}"`, line: lines?.[i] ?? i + 1 }))
      seen.add(id)
      out.push({ ...c, id })
    }
    return Effect.succeed(out)
  })

/**
 * A dataset from an array of cases (ids assigned where missing). Fails with `DatasetError` on a
 * duplicate id.
 *
 * @example
 * ```ts
 * const cases = dataset("arithmetic", [{ input: "2 + 2?", expected: "4" }, { id: "mul", input: "3 * 5?", expected: "15" }])
 * ```
 */
export const dataset = <I, E = unknown>(name: string, cases: ReadonlyArray<EvalCaseInit<I, E>>): Effect.Effect<Dataset<I, E>, DatasetError> =>
  Effect.map(withIds(name, cases), (checked) => ({ name, cases: checked }))

const datasetOfLines = <I, E>(name: string, cases: ReadonlyArray<EvalCaseInit<I, E>>, lines: ReadonlyArray<number>): Effect.Effect<Dataset<I, E>, DatasetError> =>
  Effect.map(withIds(name, cases, lines), (checked) => ({ name, cases: checked }))

/** Options of `datasetFromJsonl` and `loadJsonl`: Schemas decoding each line's `input` and `expected`. */
export interface JsonlOptions<I, E> {
  readonly name?: string
  readonly input?: Schema.Codec<I, any>
  readonly expected?: Schema.Codec<E, any>
}

const ExpectedCall = Schema.Struct({ tool: Schema.String, args: Schema.optionalKey(Schema.Unknown) })
const Line = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  input: Schema.Unknown,
  expected: Schema.optionalKey(Schema.Unknown),
  tools: Schema.optionalKey(Schema.Array(ExpectedCall)),
  tags: Schema.optionalKey(Schema.Array(Schema.String))
})
const decodeLine = Schema.decodeUnknownResult(Line)

/**
 * A dataset from JSON Lines text: one case per non-blank line, `{"id"?, "input", "expected"?, "tools"?,
 * "tags"?}`. With `input`/`expected` Schemas, each is decoded (their failures name the line).
 *
 * @example
 * ```ts
 * const cases = datasetFromJsonl('{"input":"2 + 2?","expected":"4"}\n{"input":"3 * 5?","expected":"15"}', { name: "arithmetic" })
 * ```
 */
export const datasetFromJsonl = <I = unknown, E = unknown>(text: string, options: JsonlOptions<I, E> = {}): Effect.Effect<Dataset<I, E>, DatasetError> =>
  Effect.suspend(() => {
    const source = options.name ?? "jsonl"
    const cases: Array<EvalCaseInit<I, E>> = []
    const lineOf: Array<number> = []
    const lines = text.split(/\r?\n/)
    for (const [i, raw] of lines.entries()) {
      if (raw.trim() === "") continue
      const fail = (reason: string) => Effect.fail(new DatasetError({ source, reason, line: i + 1 }))
      let json: unknown
      try {
        json = JSON.parse(raw)
      } catch (error) {
        return fail(`not JSON (${error instanceof Error ? error.message : String(error)})`)
      }
      const line = decodeLine(json)
      if (line._tag === "Failure") return fail(line.failure.message)
      const { input, expected, ...rest } = line.success
      const decodedInput = options.input === undefined ? { _tag: "Success" as const, success: input as I } : Schema.decodeUnknownResult(options.input)(input)
      if (decodedInput._tag === "Failure") return fail(`input: ${decodedInput.failure.message}`)
      let decodedExpected: E | undefined = expected as E | undefined
      if (expected !== undefined && options.expected !== undefined) {
        const result = Schema.decodeUnknownResult(options.expected)(expected)
        if (result._tag === "Failure") return fail(`expected: ${result.failure.message}`)
        decodedExpected = result.success
      }
      cases.push({ ...rest, input: decodedInput.success, ...(decodedExpected === undefined ? {} : { expected: decodedExpected }) })
      lineOf.push(i + 1)
    }
    return datasetOfLines<I, E>(source, cases, lineOf)
  })

const fs = lazyPackage<typeof import("node:fs/promises")>("node:fs/promises")

/**
 * A dataset from a JSON Lines file (see `datasetFromJsonl`); named after the file unless `name` is given.
 *
 * @example
 * ```ts
 * const cases = yield* loadJsonl("evals/arithmetic.jsonl", { expected: Schema.String })
 * ```
 */
export const loadJsonl = <I = unknown, E = unknown>(path: string, options: JsonlOptions<I, E> = {}): Effect.Effect<Dataset<I, E>, DatasetError> =>
  Effect.flatMap(
    Effect.tryPromise({
      try: () => fs().readFile(path, "utf8"),
      catch: (error) => new DatasetError({ source: path, reason: `cannot read it (${error instanceof Error ? error.message : String(error)})` })
    }),
    (text) => datasetFromJsonl(text, { ...options, name: options.name ?? path })
  )
