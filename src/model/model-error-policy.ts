/**
 * What to do when a model call fails with a `ModelError`, as a wrapper around any `ModelClient` (the
 * Kotlin reference's `onLLMError`): answer with a fixed response, retry on an Effect `Schedule`, or fall
 * back to other models in order (an Effect `ExecutionPlan`, one step per model). Wrapping the client
 * keeps the loop unchanged: a policy is just another client, every attempt inside one model call (and
 * inside that call's span and the run's `maxDuration`). Interruption is never retried.
 */
import * as Effect from "effect/Effect"
import * as ExecutionPlan from "effect/ExecutionPlan"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type { LlmResponse, ModelRequest } from "./messages.ts"
import { type ModelClient, ModelClientService } from "./model-client.ts"
import type { ModelError } from "./model-error.ts"

/** A model-error policy; build one with `ModelErrorPolicy.respond`, `.retry` or `.fallback`. */
export type ModelErrorPolicy =
  | { readonly _tag: "Respond"; readonly respond: (error: ModelError, request: ModelRequest) => LlmResponse }
  | { readonly _tag: "Retry"; readonly schedule: Schedule.Schedule<unknown, ModelError>; readonly while: (error: ModelError) => boolean }
  | {
    readonly _tag: "Fallback"
    readonly models: ReadonlyArray<ModelClient>
    readonly attempts: number
    readonly schedule: Schedule.Schedule<unknown, ModelError> | undefined
  }

/**
 * The policies.
 *
 * @example
 * ```ts
 * const client = withModelErrorPolicy(openai("gpt-4o"), ModelErrorPolicy.fallback([ollama("qwen2.5:7b")]))
 * withModelErrorPolicy(model, ModelErrorPolicy.retry(Schedule.max([Schedule.exponential("200 millis"), Schedule.recurs(3)])))
 * withModelErrorPolicy(model, ModelErrorPolicy.respond({ _tag: "Text", content: "The service is busy; try later." }))
 * ```
 */
export const ModelErrorPolicy = {
  /** Answer with `response` (or its value for the error) instead of failing: the run goes on with it. */
  respond: (response: LlmResponse | ((error: ModelError, request: ModelRequest) => LlmResponse)): ModelErrorPolicy => ({
    _tag: "Respond",
    respond: typeof response === "function" ? response : () => response
  }),
  /** Call again on `schedule`, while `while` holds (default: the error `isRetryable`). */
  retry: (
    schedule: Schedule.Schedule<unknown, ModelError>,
    options: { readonly while?: (error: ModelError) => boolean } = {}
  ): ModelErrorPolicy => ({ _tag: "Retry", schedule, while: options.while ?? ((error) => error.isRetryable) }),
  /**
   * Try the wrapped model `attempts` times (default 1), then each of `models` in order, `attempts` times
   * each, spaced by `schedule`; the last model's error ends the call.
   */
  fallback: (
    models: ReadonlyArray<ModelClient>,
    options: { readonly attempts?: number; readonly schedule?: Schedule.Schedule<unknown, ModelError> } = {}
  ): ModelErrorPolicy => ({ _tag: "Fallback", models, attempts: Math.max(1, Math.floor(options.attempts ?? 1)), schedule: options.schedule })
} as const

/**
 * `client` with `policy` applied to its failures.
 *
 * @example
 * ```ts
 * agent("a").model(withModelErrorPolicy(primary, ModelErrorPolicy.fallback([secondary, tertiary])))
 * ```
 */
export const withModelErrorPolicy = (client: ModelClient, policy: ModelErrorPolicy): ModelClient => {
  // Spans and metrics name the wrapped client's provider and model (a fallback's later models answer
  // under them too: `gen_ai.response.model` says which did, when its provider reports it).
  const wrapped = (chat: ModelClient["chat"]): ModelClient => (client.metadata === undefined ? { chat } : { chat, metadata: client.metadata })
  switch (policy._tag) {
    case "Respond":
      return wrapped((request) => client.chat(request).pipe(Effect.catch((error) => Effect.sync(() => policy.respond(error, request)))))
    case "Retry":
      return wrapped((request) => Effect.suspend(() => client.chat(request)).pipe(Effect.retry({ schedule: policy.schedule, while: policy.while })))
    case "Fallback": {
      const step = (model: ModelClient) => ({
        provide: Layer.succeed(ModelClientService, model),
        attempts: policy.attempts,
        ...(policy.schedule === undefined ? {} : { schedule: policy.schedule })
      })
      const plan = ExecutionPlan.make(step(client), ...policy.models.map(step))
      const call = (request: ModelRequest) =>
        Effect.gen(function*() {
          const model = yield* ModelClientService
          return yield* model.chat(request)
        })
      return wrapped((request) => Effect.withExecutionPlan(call(request), plan))
    }
  }
}

