/**
 * Hostile inputs for property tests: values no JSON can hold (BigInt, cycles, null-prototype cycles,
 * very deep nesting, throwing getters and `toJSON`), hooks, tools and model clients that misbehave
 * (throw hostile values, never settle, interrupt themselves, ignore their abort signal), and responses
 * that break the protocol (negative usage, missing ids, throwing getters). Arbitraries generate plain
 * *kinds* (so fast-check can print and shrink them); `hostileValue`, `hostileHook`, `hostileTool` and
 * `hostileClient` build the misbehaving thing from a kind inside the property.
 */
import * as Effect from "effect/Effect"
import fc from "fast-check"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import type { LlmResponse, ModelRequest } from "../model/messages.ts"
import type { ModelClient } from "../model/model-client.ts"

/** The kinds of values JSON cannot hold or that throw when read. */
export const hostileValueKinds = ["bigint", "cyclic", "cyclic-null-prototype", "deep", "throwing-getter", "throwing-toJSON"] as const
/**
 * One of {@link hostileValueKinds}: a value JSON cannot hold or that throws when read.
 *
 * @example
 * ```ts
 * const kind: HostileValueKind = "cyclic"
 * ```
 */
export type HostileValueKind = (typeof hostileValueKinds)[number]

/**
 * A value of `kind`, built fresh.
 *
 * @example
 * ```ts
 * JSON.stringify(hostileValue("cyclic")) // throws
 * ```
 */
export const hostileValue = (kind: HostileValueKind): unknown => {
  switch (kind) {
    case "bigint":
      return { value: 10n ** 30n }
    case "cyclic": {
      const o: Record<string, unknown> = { a: 1 }
      o["self"] = o
      return o
    }
    case "cyclic-null-prototype": {
      const o: Record<string, unknown> = Object.create(null)
      o["self"] = o
      return o
    }
    case "deep": {
      let v: unknown = 1
      for (let i = 0; i < 20_000; i++) v = [v]
      return v
    }
    case "throwing-getter":
      return Object.defineProperty({}, "a", { enumerable: true, get: () => { throw new Error("getter throws") } })
    case "throwing-toJSON":
      return { toJSON: () => { throw new Error("toJSON throws") } }
  }
}

/**
 * One of the hostile value kinds.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(arbHostileValueKind, (kind) => describe(hostileValue(kind)).length > 0))
 * ```
 */
export const arbHostileValueKind: fc.Arbitrary<HostileValueKind> = fc.constantFrom(...hostileValueKinds)

/** How a hook (listener) behaves. */
export type HookBehaviour =
  | { readonly _tag: "Ok" }
  | { readonly _tag: "Throws"; readonly value: HostileValueKind | "error" }
  | { readonly _tag: "Rejects" }
  | { readonly _tag: "NeverSettles" }
  | { readonly _tag: "EffectNever" }
  | { readonly _tag: "Interrupts" }
  /** Blocks its thread for `ms` real milliseconds, then returns (JavaScript cannot pre-empt it). */
  | { readonly _tag: "SyncHang"; readonly ms: number }

/**
 * Hook behaviours, well-behaved ones `okWeight` times as likely as each misbehaviour: throwing,
 * rejecting, a Promise that never settles, `Effect.never`, `Effect.interrupt`, a short synchronous hang.
 *
 * @example
 * ```ts
 * fc.sample(arbHookBehaviour(), 3)
 * ```
 */
export const arbHookBehaviour = (okWeight = 4): fc.Arbitrary<HookBehaviour> =>
  fc.oneof(
    { weight: okWeight, arbitrary: fc.constant<HookBehaviour>({ _tag: "Ok" }) },
    { weight: 1, arbitrary: fc.oneof(arbHostileValueKind, fc.constant("error" as const)).map((value): HookBehaviour => ({ _tag: "Throws", value })) },
    { weight: 1, arbitrary: fc.constantFrom<HookBehaviour>({ _tag: "Rejects" }, { _tag: "NeverSettles" }, { _tag: "EffectNever" }, { _tag: "Interrupts" }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((ms): HookBehaviour => ({ _tag: "SyncHang", ms })) }
  )

const never = () => new Promise<never>(() => {})

/**
 * A listener behaving as `behaviour`, after calling `observe` with the event.
 *
 * @example
 * ```ts
 * agent("a").onRunEnd(hostileHook({ _tag: "NeverSettles" }))
 * ```
 */
export const hostileHook = <E>(behaviour: HookBehaviour, observe?: (event: E) => void) => (event: E): MaybeEffect<unknown> => {
  observe?.(event)
  switch (behaviour._tag) {
    case "Ok":
      return undefined
    case "Throws":
      throw behaviour.value === "error" ? new Error("hook throws") : hostileValue(behaviour.value)
    case "Rejects":
      return Promise.reject(new Error("hook rejects"))
    case "NeverSettles":
      return never()
    case "EffectNever":
      return Effect.never
    case "Interrupts":
      return Effect.interrupt
    case "SyncHang": {
      const until = Date.now() + behaviour.ms
      while (Date.now() < until) {
        // busy: the thread is held, as by a synchronous loop in user code
      }
      return undefined
    }
  }
}

/** How a tool's `run` behaves. */
export type ToolBehaviour =
  | { readonly _tag: "Returns" }
  | { readonly _tag: "ReturnsHostile"; readonly value: HostileValueKind }
  | { readonly _tag: "Throws"; readonly value: HostileValueKind | "error" }
  | { readonly _tag: "IgnoresSignal"; readonly afterMs: number }
  | { readonly _tag: "NeverSettles" }
  | { readonly _tag: "Interrupts" }

/**
 * Tool behaviours; `IgnoresSignal` reads its signal only after a real-time wait of `afterMs` and
 * never settles (it keeps running until the run's budgets interrupt it; its signal must then abort).
 *
 * @example
 * ```ts
 * fc.sample(arbToolBehaviour(), 3)
 * ```
 */
export const arbToolBehaviour = (okWeight = 4): fc.Arbitrary<ToolBehaviour> =>
  fc.oneof(
    { weight: okWeight, arbitrary: fc.constant<ToolBehaviour>({ _tag: "Returns" }) },
    { weight: 1, arbitrary: arbHostileValueKind.map((value): ToolBehaviour => ({ _tag: "ReturnsHostile", value })) },
    { weight: 1, arbitrary: fc.oneof(arbHostileValueKind, fc.constant("error" as const)).map((value): ToolBehaviour => ({ _tag: "Throws", value })) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 5 }).map((afterMs): ToolBehaviour => ({ _tag: "IgnoresSignal", afterMs })) },
    { weight: 1, arbitrary: fc.constantFrom<ToolBehaviour>({ _tag: "NeverSettles" }, { _tag: "Interrupts" }) }
  )

/** What a hostile tool left behind: the signals it read after its wait, to check they were aborted. */
export interface ToolObservations {
  readonly lateSignals: Array<AbortSignal>
}

/**
 * A tool `run` behaving as `behaviour`; `IgnoresSignal` pushes the signal it reads late to `observed`.
 *
 * @example
 * ```ts
 * tool("t", { args: Schema.Struct({}), run: hostileToolRun({ _tag: "NeverSettles" }, { lateSignals: [] }) })
 * ```
 */
export const hostileToolRun = (behaviour: ToolBehaviour, observed: ToolObservations) =>
(_args: unknown, context: { readonly signal: AbortSignal }): MaybeEffect<unknown> => {
  switch (behaviour._tag) {
    case "Returns":
      return "ok"
    case "ReturnsHostile":
      return hostileValue(behaviour.value)
    case "Throws":
      throw behaviour.value === "error" ? new Error("tool throws") : hostileValue(behaviour.value)
    case "IgnoresSignal":
      return new Promise<never>(() => {
        setTimeout(() => observed.lateSignals.push(context.signal), behaviour.afterMs)
      })
    case "NeverSettles":
      return never()
    case "Interrupts":
      return Effect.interrupt
  }
}

/** How a raw `ModelClient` misbehaves on one call (or answers `Script`, the scripted response). */
export type ClientBehaviour =
  | { readonly _tag: "Script" }
  | { readonly _tag: "ThrowsSync" }
  | { readonly _tag: "NotAnEffect" }
  | { readonly _tag: "Dies"; readonly value: HostileValueKind | "error" }
  | { readonly _tag: "FailsWithNonModelError" }
  | { readonly _tag: "Interrupts" }
  | { readonly _tag: "NegativeUsage" }
  | { readonly _tag: "MissingIds" }
  | { readonly _tag: "ThrowingGetter" }
  | { readonly _tag: "HostileArguments"; readonly value: HostileValueKind }

/**
 * Raw client behaviours; `Script` (the response from the script) `okWeight` times as likely as each misbehaviour.
 *
 * @example
 * ```ts
 * fc.sample(arbClientBehaviour(), 3)
 * ```
 */
export const arbClientBehaviour = (okWeight = 6): fc.Arbitrary<ClientBehaviour> =>
  fc.oneof(
    { weight: okWeight, arbitrary: fc.constant<ClientBehaviour>({ _tag: "Script" }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<ClientBehaviour>(
        { _tag: "ThrowsSync" },
        { _tag: "NotAnEffect" },
        { _tag: "FailsWithNonModelError" },
        { _tag: "Interrupts" },
        { _tag: "NegativeUsage" },
        { _tag: "MissingIds" },
        { _tag: "ThrowingGetter" }
      )
    },
    { weight: 1, arbitrary: fc.oneof(arbHostileValueKind, fc.constant("error" as const)).map((value): ClientBehaviour => ({ _tag: "Dies", value })) },
    { weight: 1, arbitrary: arbHostileValueKind.map((value): ClientBehaviour => ({ _tag: "HostileArguments", value })) }
  )

/**
 * A raw `ModelClient` (no `fromFunction` safety net): call `n` behaves as `behaviours[n]` (the last
 * one repeating), `Script` answering `answer(request, n)`.
 *
 * @example
 * ```ts
 * hostileClient([{ _tag: "MissingIds" }], () => ({ _tag: "Text", content: "hi" }))
 * ```
 */
export const hostileClient = (
  behaviours: ReadonlyArray<ClientBehaviour>,
  answer: (request: ModelRequest, call: number) => LlmResponse
): ModelClient => {
  let calls = 0
  return {
    chat: (request) => {
      const n = calls++
      const behaviour = behaviours[Math.min(n, behaviours.length - 1)] ?? { _tag: "Script" }
      const scripted = () => answer(request, n)
      switch (behaviour._tag) {
        case "Script":
          return Effect.sync(scripted)
        case "ThrowsSync":
          throw new Error("chat throws synchronously")
        case "NotAnEffect":
          return scripted() as never
        case "Dies":
          return Effect.die(behaviour.value === "error" ? new Error("client dies") : hostileValue(behaviour.value))
        case "FailsWithNonModelError":
          return Effect.fail(new Error("not a ModelError")) as never
        case "Interrupts":
          return Effect.interrupt
        case "NegativeUsage":
          return Effect.sync(() => ({ ...scripted(), usage: { inputTokens: -1_000_000, outputTokens: 0 } }))
        case "MissingIds":
          return Effect.sync(() => {
            const response = scripted()
            return response._tag === "ToolCalls" ? { ...response, calls: response.calls.map(({ id: _, ...call }) => call) } as never : response
          })
        case "ThrowingGetter":
          return Effect.succeed(Object.defineProperty({ _tag: "Text" }, "content", { enumerable: true, get: () => { throw new Error("getter") } }) as never)
        case "HostileArguments":
          return Effect.succeed({ _tag: "ToolCalls", calls: [{ id: "hostile", name: "submit", arguments: hostileValue(behaviour.value) }] } as never)
      }
    }
  }
}
