/**
 * Interceptors: code that sees a tool call's decoded arguments just before the tool would run and
 * decides what happens — `proceed`, `proceedWith(args)` (other arguments, decoded again with the tool's
 * Schema), `deny(reason)` (the tool does not run; the model is told), `substitute(result)` (the tool
 * does not run; the model gets this result) or `suspend(reason)` (the run waits for a human decision,
 * as approval does). `suspend` is only offered for tools that may need approval, so an agent's `run`
 * type stays honest about pausing.
 */
import * as Data from "effect/Data"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import type { AnyTool, Tool } from "./tool.ts"

/** What an interceptor decided. */
export type Interception = Data.TaggedEnum<{
  Proceed: {}
  ProceedWith: { readonly args: unknown }
  Deny: { readonly reason: string }
  Substitute: { readonly result: unknown }
  Suspend: { readonly reason: string }
}>

const InterceptionEnum = Data.taggedEnum<Interception>()

/** The decisions an interceptor of a tool may take: without `Suspend` for a tool that never needs approval. */
export type InterceptionOf<T> = T extends Tool<any, any, any, any, infer Approval> ? true extends Approval ? Interception
  : Exclude<Interception, { readonly _tag: "Suspend" }>
  : never

/**
 * The decisions: `Intercept.proceed`, `Intercept.proceedWith(args)`, `Intercept.deny(reason)`,
 * `Intercept.substitute(result)`, `Intercept.suspend(reason)`.
 *
 * @example
 * ```ts
 * bank.intercept("transfer", ({ to }) => (to === "mallory" ? Intercept.deny("blocked payee") : Intercept.proceed))
 * ```
 */
export const Intercept = {
  proceed: InterceptionEnum.Proceed() as Exclude<Interception, { readonly _tag: "Suspend" }>,
  proceedWith: (args: unknown) => InterceptionEnum.ProceedWith({ args }) as Exclude<Interception, { readonly _tag: "Suspend" }>,
  deny: (reason: string) => InterceptionEnum.Deny({ reason: String(reason) }) as Exclude<Interception, { readonly _tag: "Suspend" }>,
  substitute: (result: unknown) => InterceptionEnum.Substitute({ result }) as Exclude<Interception, { readonly _tag: "Suspend" }>,
  suspend: (reason: string): Interception => InterceptionEnum.Suspend({ reason: String(reason) }),
  $is: InterceptionEnum.$is,
  $match: InterceptionEnum.$match
} as const

/** What an interceptor gets beside the decoded arguments. */
export interface InterceptContext {
  readonly agent: string
  readonly skill: string
  readonly toolCallId: string
}

/**
 * An interceptor of tool `T`: typed arguments in, a decision out (sync, Promise or Effect). One that
 * throws or fails denies the call (the safe side).
 *
 * @example
 * ```ts
 * const limit: Interceptor<typeof transfer> = ({ amount }) => (amount > 1000 ? Intercept.suspend("large") : Intercept.proceed)
 * ```
 */
export type Interceptor<T extends AnyTool> = (args: Tool.Args<T>, context: InterceptContext) => MaybeEffect<InterceptionOf<T>>
