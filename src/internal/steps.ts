/**
 * Internal: generator code the loop delegates to (`yield*`) inside its one `Effect.gen`, yielding
 * Effects that may fail with `E` and require `R`, and returning `A`. A step written this way costs no
 * Effect of its own (see `runtime/step.ts`); `Effect.gen(() => steps)` makes one when needed.
 *
 * @example
 * ```ts
 * function* twice(effect: Effect.Effect<number>): Steps<number> {
 *   return (yield* effect) + (yield* effect)
 * }
 * ```
 */
import type * as Effect from "effect/Effect"

export type Steps<A, E = never, R = never> = Generator<Effect.Effect<any, E, R>, A, any>
