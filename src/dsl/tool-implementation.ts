/**
 * Tools implemented by a Layer, as Effect's `Toolkit.toLayer`: a tool declared without `run` requires
 * the service `ToolImplementation<Name>`, and `toolLayer(tool, run)` provides it. The agent is built
 * once; a test provides another implementation without rebuilding it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { MaybeEffect, RequirementsOf } from "../internal/from-maybe-effect.ts"
import type { Tool, ToolContext } from "./tool.ts"

/**
 * The service that implements the declared tool `Name`; an agent using the tool requires it until a
 * `toolLayer(...)` is provided.
 *
 * @example
 * ```ts
 * const lookup = tool("lookup", { args: Schema.Struct({ id: Schema.String }) })
 * // typeof lookup: Tool<"lookup", { readonly id: string }, unknown, ToolImplementation<"lookup">>
 * ```
 */
export interface ToolImplementation<Name extends string> {
  readonly "~toolImplementation": Name
}

/**
 * What a `ToolImplementation` service holds: the tool's `run`, its own services already provided.
 *
 * @example
 * ```ts
 * const handler: ToolHandler = ({ id }) => `order ${id}`
 * ```
 */
export type ToolHandler = (args: any, context: ToolContext) => MaybeEffect<unknown>

/**
 * Internal: the Context key of the implementation of the tool named `name` (keys are compared by their
 * text, so two declared tools of the same name share an implementation).
 */
export const toolImplementationKey = <Name extends string>(name: Name): Context.Service<ToolImplementation<Name>, ToolHandler> =>
  Context.Service<ToolImplementation<Name>, ToolHandler>(`effect-agent-dsl/ToolImplementation/${name}`)

/**
 * Implements a tool declared without `run`. `run` may return a value, a Promise or an Effect; the
 * services its Effects require become the Layer's requirements, so they are provided once, with the Layer.
 *
 * @example
 * ```ts
 * const lookup = tool("lookup", { args: Schema.Struct({ id: Schema.String }), success: Schema.String })
 * const LookupLive = toolLayer(lookup, ({ id }) => Effect.map(Effect.service(Database), (db) => db.find(id)))
 * const LookupTest = toolLayer(lookup, ({ id }) => `fake ${id}`)
 * await support.provide(LookupTest).run("find order 7")
 * ```
 */
export const toolLayer = <Name extends string, Args, Result, $Out extends MaybeEffect<Result, any>>(
  tool: Tool<Name, Args, Result, ToolImplementation<Name>>,
  run: (args: Args, context: ToolContext) => $Out
): Layer.Layer<ToolImplementation<Name>, never, RequirementsOf<$Out>> =>
  Layer.effect(
    toolImplementationKey(tool.name),
    Effect.map(Effect.context<RequirementsOf<$Out>>(), (services): ToolHandler => (args, context) => {
      const out = run(args, context)
      return Effect.isEffect(out) ? Effect.provideContext(out as Effect.Effect<unknown, unknown, any>, services) : out
    })
  )
