/**
 * The services a definition brings to its own runs: its model (or, for an agent made only of
 * deterministic skills, a model that explains why none is needed), then the Layers given to
 * `.provide`. A run that still has no model fails with an `AgentConfigError` saying how to give it one,
 * not with Effect's raw "Service not found".
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type AgentError, AgentConfigError, isAgentError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { type ModelClient, ModelClientService } from "../model/model-client.ts"
import { ModelError } from "../model/model-error.ts"
import type { AgentDefinition } from "./agent-definition.ts"

/** Every skill is implemented by a function: the agent runs without a model. */
export const isModelFree = (definition: AgentDefinition): boolean =>
  definition.skills.length > 0 && definition.skills.every((s) => s.implementation !== undefined)

/**
 * The model of an agent made only of deterministic skills: only a choice among several skills without
 * `.when` would call it, and then the run fails with this explanation.
 *
 * @example
 * ```ts
 * const client = noModel("router") // chat fails with ModelError { provider: "none" }
 * ```
 */
export const noModel = (agent: string): ModelClient => ({
  chat: () =>
    Effect.fail(new ModelError({
      provider: "none",
      reason: `agent "${agent}" has no model: its skills are deterministic, but choosing among several skills without .when(...) needs one. Give the skills predicates, or call .model(...)`
    }))
})

/** The error of a run that needs a model and found none, neither on the agent nor in its context. */
export const missingModel = (agent: string): AgentConfigError =>
  new AgentConfigError({
    subject: `agent "${agent}"`,
    reason: "it has no model: call .model(...) on the agent, or provide one to runEffect with Effect.provide(ModelClient.layer(client)) (or .provide(layer) on the agent)"
  })

/**
 * Succeeds when the context has a `ModelClient`, else fails with `missingModel` (a run without a
 * model of its own reads the caller's).
 *
 * @example
 * ```ts
 * Effect.andThen(modelInContext("a"), run)
 * ```
 */
export const modelInContext = (agent: string): Effect.Effect<void, AgentConfigError> =>
  Effect.flatMap(Effect.serviceOption(ModelClientService), (client) => (Option.isSome(client) ? Effect.void : Effect.fail(missingModel(agent))))

/**
 * Internal: provides a definition's own services to one of its runs: its model (or, for an agent made
 * only of deterministic skills, a model that explains why none is needed), then the Layers given to
 * `.provide` (a Layer that fails to build fails the run with `AgentConfigError`). Without a model of its
 * own, the run takes the `ModelClient` of its context, and fails with `AgentConfigError` when there is none.
 *
 * @example
 * ```ts
 * const run = withDefinitionServices(definition, runAgent(definition, input))
 * ```
 */
export const withDefinitionServices = <A, R>(definition: AgentDefinition, run: Effect.Effect<A, AgentError, R>): Effect.Effect<A, AgentError, any> => {
  const model = definition.model ?? (isModelFree(definition) ? noModel(definition.name) : undefined)
  let provided: Effect.Effect<A, AgentError, any> = model !== undefined
    ? Effect.provideService(run, ModelClientService, model)
    : Effect.andThen(modelInContext(definition.name), run)
  for (const layer of definition.layers) provided = Effect.provide(provided, layer)
  return definition.layers.length === 0
    ? provided
    : Effect.mapError(provided, (error) => (isAgentError(error) ? error : layerFailed(definition.name, error)))
}

/**
 * A Layer given to `.provide(...)` failed to build: a configuration error of the agent.
 *
 * @example
 * ```ts
 * Effect.mapError(run, (e) => layerFailed("a", e))
 * ```
 */
export const layerFailed = (agent: string, error: unknown): AgentConfigError =>
  new AgentConfigError({ subject: `agent "${agent}"`, reason: `a Layer given to .provide(...) failed to build: ${describeCause(error)}` })
