/**
 * What composition operators compose: anything with a name that runs as an Effect from an input to an
 * output. Agents (`agent(...)`) are runnables, and so is every composite, so composites compose further.
 */
import type * as Effect from "effect/Effect"

/**
 * Runs from `In` to `Out`, needing services `R`.
 *
 * @example
 * ```ts
 * const upper: Runnable<string, string> = { name: "upper", runEffect: (s) => Effect.succeed(s.toUpperCase()) }
 * ```
 */
export interface Runnable<In, Out, E = unknown, R = never> {
  readonly name: string
  runEffect(input: In): Effect.Effect<Out, E, R>
}

/** Any runnable. */
export type AnyRunnable = Runnable<any, any, any, any>

/** The input type of a runnable. */
export type InputOf<T> = T extends { runEffect(input: infer I): any } ? I : never
/** The output type of a runnable. */
export type OutputOf<T> = T extends { runEffect(input: any): Effect.Effect<infer O, any, any> } ? O : never
/** The error type of a runnable. */
export type ErrorOf<T> = T extends { runEffect(input: any): Effect.Effect<any, infer E, any> } ? E : never
/** The services a runnable needs. */
export type RequirementsOf<T> = T extends { runEffect(input: any): Effect.Effect<any, any, infer R> } ? R : never

/** True when `A` and `B` are the same type (each assignable to the other). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/** True for values with a name and a `runEffect` method. */
export const isRunnable = (u: unknown): u is AnyRunnable =>
  typeof u === "object" && u !== null && "runEffect" in u && typeof u.runEffect === "function" &&
  "name" in u && typeof u.name === "string"
