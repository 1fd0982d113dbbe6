/**
 * AG-UI shared state: the `state` a front end sends with each `RunAgentInput` (CopilotKit's
 * `useCoAgent` state, `HttpAgent`'s `state`), typed by a Schema and readable and writable by the
 * run's tools, with every change streamed back to the front end.
 *
 * - In: `agUiHandler(agent, { state })` decodes the input's `state` with the Schema (an empty or
 *   missing one is `initial`); a state that does not decode is refused (400, `AgUiInputInvalid`).
 * - During the run: tools (and agents they call: the state is in the fiber's context) read it with
 *   `state.get` and change it with `state.set` / `state.update`, Effects that fail with
 *   `AgUiStateUnavailable` outside such a run and `AgUiStateInvalid` for a value that does not encode.
 *   `state.setTool(name)` lets the model itself replace the state (CopilotKit's "agent writes state").
 * - Out: the stream opens with `STATE_SNAPSHOT` (the decoded state, encoded again: what the run
 *   works on) right after `RUN_STARTED`; each change is sent as `STATE_DELTA` (RFC 6902 JSON Patch
 *   from the last state sent, made by `fast-json-patch`) before the next event of the run, so a
 *   tool's changes reach the client before its `TOOL_CALL_RESULT`, and the last ones before
 *   `RUN_FINISHED`. A change a patch cannot carry safely (a new root that is not an object or array,
 *   a key such as `__proto__` that patch appliers refuse) is sent as a `STATE_SNAPSHOT` instead.
 *
 * The server keeps no state between runs: the client sends its state (the snapshot with the deltas
 * applied) with its next input, and that input is decoded again. Treat it as the user's data.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import jsonPatch from "fast-json-patch"
import { StreamSink } from "../../dsl/lineage.ts"
import type { RunStreamEvent } from "../../dsl/events.ts"
import { type Tool, tool } from "../../dsl/tool.ts"
import { effectStream } from "../../internal/lazy-effect.ts"
import { costGuard } from "../../internal/decode-cost.ts"
import { agUiInvalid, AgUiStateInvalid, AgUiStateUnavailable } from "./errors.ts"
import type { JsonPatchOperation } from "./wire/ag-ui-event.ts"
import type { AgUiStateChange, AgUiStateSource } from "./wire/to-ag-ui.ts"

/** The cell of the run in progress (undefined outside a run with AG-UI state). */
const CurrentAgUiState = Context.Reference<AgUiStateCell<any> | undefined>("effect-agent-dsl/ag-ui/CurrentState", {
  defaultValue: () => undefined
})

/** Options of {@link agUiState}. */
export interface AgUiStateOptions<S> {
  /** The state of a run whose input sends none (no `state`, `null` or `{}`). Without it, such a state is decoded as `{}`. */
  readonly initial?: S
}

/**
 * A typed AG-UI shared state: its Schema, and the Effects tools use to read and change the state of
 * the run they are in. Make one with {@link agUiState}, give it to `agUiHandler(agent, { state })`.
 */
export interface AgUiState<S, E = S> {
  /** Names the state in errors. */
  readonly name: string
  readonly schema: Schema.Codec<S, E, never, never>
  readonly initial: S | undefined
  /** The run's state. */
  readonly get: Effect.Effect<S, AgUiStateUnavailable>
  /** Replaces the run's state (sent to the client as a `STATE_DELTA`); answers the new state. */
  readonly set: (value: S) => Effect.Effect<S, AgUiStateUnavailable | AgUiStateInvalid>
  /** Replaces the run's state by `f` of it; answers the new state. */
  readonly update: (f: (state: S) => S) => Effect.Effect<S, AgUiStateUnavailable | AgUiStateInvalid>
  /** A cell holding `initial`, for a run you stream yourself (`toAgUiEvents(cell.provideStream(events), { state: cell })`). */
  readonly cell: (initial: S) => AgUiStateCell<S>
  /** A cell holding a `RunAgentInput`'s `state`, decoded; throws `AgUiInputInvalid` when it does not decode. */
  readonly fromInput: (state: unknown) => AgUiStateCell<S>
  /**
   * A tool with which the model replaces the whole state (arguments `{ state }`, decoded with the
   * Schema): the state the front end shows is then the agent's to write, as with CopilotKit's
   * predictive state updates. Answers "State updated.".
   *
   * @example
   * ```ts
   * const writer = agent("writer").model(model).tools({ set_recipe: recipe.setTool("set_recipe") })
   * ```
   */
  readonly setTool: <const Name extends string>(name: Name, description?: string) => Tool<Name, { readonly state: S }, string>
}

/** The state of one run: what the run's tools read and change, and what its AG-UI stream reports. */
export interface AgUiStateCell<S> extends AgUiStateSource {
  readonly state: AgUiState<S, any>
  /** The state now. */
  readonly current: () => S
  /** Runs `effect` (a run) with this cell as its state. */
  readonly provide: <A, Err, R>(effect: Effect.Effect<A, Err, R>) => Effect.Effect<A, Err, R>
  /**
   * Runs `stream` (a streamed run) with this cell as its state. A change takes its place among the
   * run's events when the run streams through a sink its tools see (`chatStream`,
   * `chatResumeStream`, `agUiHandler`, a composite's `runStream`); under `agent.runStream` or
   * `agent.resumeStream` it is sent before the next event read, and the last state always before
   * `RUN_FINISHED`.
   */
  readonly provideStream: <A, Err, R>(stream: Stream.Stream<A, Err, R>) => Stream.Stream<A, Err, R>
}

/** A plain JSON copy (what crosses the wire), or the reason there is none. */
const jsonCopy = (value: unknown): Result.Result<unknown, string> => {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? Result.fail("it has no JSON form") : Result.succeed(JSON.parse(text))
  } catch (error) {
    return Result.fail(error instanceof Error ? error.message : String(error))
  }
}

const isContainer = (u: unknown): u is object => typeof u === "object" && u !== null
/** Keys a patch applier refuses (fast-json-patch bans prototype changes by default, as `@ag-ui/client` applies it). */
const unsafeSegment = /(^|\/)(__proto__|constructor|prototype)(\/|$)/

/** The RFC 6902 operations turning `from` into `to`, or undefined when a snapshot must carry the change. */
export const statePatch = (from: unknown, to: unknown): ReadonlyArray<JsonPatchOperation> | undefined => {
  if (!isContainer(from) || !isContainer(to) || Array.isArray(from) !== Array.isArray(to)) return undefined
  const ops = jsonPatch.compare(from, to) as unknown as ReadonlyArray<JsonPatchOperation>
  return ops.some((op) => unsafeSegment.test(op.path)) ? undefined : ops
}

const isEmpty = (u: unknown) => u === undefined || u === null || (isContainer(u) && !Array.isArray(u) && Object.keys(u).length === 0)

/**
 * A typed AG-UI shared state. `schema` types the state (decoding the client's, encoding the run's);
 * tools read and change it with `get`, `set` and `update`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { agent, tool } from "effect-agent-dsl"
 * import { agUiHandler, agUiState } from "effect-agent-dsl/ag-ui"
 *
 * const Recipe = Schema.Struct({ title: Schema.String, ingredients: Schema.Array(Schema.String) })
 * const recipe = agUiState("recipe", Recipe, { initial: { title: "", ingredients: [] } })
 * const addIngredient = tool("addIngredient", {
 *   args: Schema.Struct({ name: Schema.String }),
 *   run: ({ name }) => recipe.update((r) => ({ ...r, ingredients: [...r.ingredients, name] })).pipe(Effect.as("added"))
 * })
 * const handle = agUiHandler(agent("chef").model(model).tools({ addIngredient }), { state: recipe })
 * ```
 */
export const agUiState = <S, E>(name: string, schema: Schema.Codec<S, E, never, never>, options: AgUiStateOptions<S> = {}): AgUiState<S, E> => {
  const encode = Schema.encodeUnknownResult(schema)
  const decode = Schema.decodeUnknownResult(schema)
  const unavailable = new AgUiStateUnavailable({ state: name })
  /** The encoded JSON of a value, or why it has none. */
  const encoded = (value: S): Result.Result<unknown, string> => {
    const result = encode(value, { errors: "all" })
    return Result.isFailure(result) ? Result.fail(result.failure.message) : jsonCopy(result.success)
  }
  const cellOf = (value: S, json: unknown): AgUiStateCell<S> => {
    let current = value
    let currentJson = json
    let unsequenced = false
    const cell: AgUiStateCell<S> & { assign: (value: S) => Effect.Effect<S, AgUiStateInvalid> } = {
      state: handle,
      current: () => current,
      initialJson: json,
      json: () => currentJson,
      diff: statePatch,
      takeUnsequenced: () => {
        const was = unsequenced
        unsequenced = false
        return was
      },
      provide: (effect) => Effect.provideService(effect, CurrentAgUiState, cell),
      provideStream: (stream) => effectStream().provideService(stream, CurrentAgUiState, cell),
      // The change goes through the run's stream (chatStream, chatResumeStream, agUiHandler, a
      // streamed composite), so it takes its place among the run's events; without one it is sent late.
      assign: (next) =>
        Effect.flatMap(StreamSink, (sink) => {
          const out = encoded(next)
          if (Result.isFailure(out)) return Effect.fail(new AgUiStateInvalid({ state: name, issues: out.failure }))
          current = next
          currentJson = out.success
          if (sink === undefined) {
            unsequenced = true
            return Effect.succeed(next)
          }
          const change: AgUiStateChange = { _tag: "AgUiStateChanged", source: cell, json: out.success }
          return Effect.as(sink(change as unknown as RunStreamEvent), next)
        })
    }
    return cell
  }
  const ours = Effect.flatMap(CurrentAgUiState, (cell) =>
    cell === undefined || cell.state !== handle
      ? Effect.fail(unavailable)
      : Effect.succeed(cell as AgUiStateCell<S> & { assign: (value: S) => Effect.Effect<S, AgUiStateInvalid> }))
  const handle: AgUiState<S, E> = {
    name,
    schema,
    initial: options.initial,
    get: Effect.map(ours, (cell) => cell.current()),
    set: (value) => Effect.flatMap(ours, (cell) => cell.assign(value)),
    update: (f) => Effect.flatMap(ours, (cell) => Effect.suspend(() => cell.assign(f(cell.current())))),
    cell: (initial) => {
      const out = encoded(initial)
      if (Result.isFailure(out)) throw new AgUiStateInvalid({ state: name, issues: out.failure })
      return cellOf(initial, out.success)
    },
    fromInput: (state) => {
      if (options.initial !== undefined && isEmpty(state)) return handle.cell(options.initial)
      // A Schema whose unions may try one value many times: a client's state that would cost more than its size allows is refused undecoded.
      const tooCostly = costGuard(schema.ast, (limit) => `checking it would try the Schema's alternatives (unions) over its parts more than ${limit} times`)?.(state ?? {})
      if (tooCostly !== undefined) throw agUiInvalid(`the state "${name}" could not be checked: ${tooCostly}`)
      const decoded = decode(state ?? {}, { errors: "all" })
      if (Result.isFailure(decoded)) throw agUiInvalid(`the state does not decode as "${name}":\n${decoded.failure.message}`)
      const out = encoded(decoded.success)
      if (Result.isFailure(out)) throw agUiInvalid(`the state "${name}" has no JSON form: ${out.failure}`)
      return cellOf(decoded.success, out.success)
    },
    setTool: (toolName, description) =>
      tool(toolName, {
        description: description ?? `Replace the shared state "${name}" (what the user sees) with a new value`,
        args: Schema.Struct({ state: schema }),
        run: ({ state }) => Effect.as(handle.set(state as S), "State updated.")
      }) as unknown as Tool<typeof toolName, { readonly state: S }, string>
  }
  return Object.freeze(handle)
}
