/**
 * The in-memory engine and the embedded engine (PGlite files in a test directory), each built once
 * for a test file with the durable agents' layers: `onEngine(kind, effect)` runs `effect` on it.
 * Runs live as long as the file, so tests give their runs ids of their own.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Exit, Layer, References, Scope } from "effect"
import { memoryEngine } from "../../src/durable/index.ts"
import { embeddedEngine } from "../../src/durable/embedded.ts"

export type EngineKind = "memory" | "embedded"
export const engineKinds: ReadonlyArray<EngineKind> = ["memory", "embedded"]

export interface TwoEngines {
  /** Builds both (call in `beforeAll`). */
  readonly start: () => Promise<void>
  /** Closes both and removes the directory (call in `afterAll`). */
  readonly stop: () => Promise<void>
  /** `effect` on engine `kind`, its warnings silenced, within 30 seconds. */
  readonly on: <A, E>(kind: EngineKind, effect: Effect.Effect<A, E, any>) => Promise<A>
}

/** Both engines, with `agents` (the durable agents' `layer`s, merged) registered on each. */
export const twoEngines = (agents: Layer.Layer<never, never, any>): TwoEngines => {
  let dir: string | undefined
  const scope = Effect.runSync(Scope.make())
  const contexts = new Map<EngineKind, Context.Context<any>>()
  const build = (engine: Layer.Layer<any, any>) =>
    Effect.runPromise(Layer.buildWithScope(agents.pipe(Layer.provideMerge(engine)), scope) as Effect.Effect<Context.Context<any>>)
  return {
    start: async () => {
      dir = mkdtempSync(join(tmpdir(), "durable-two-engines-"))
      contexts.set("memory", await build(memoryEngine))
      contexts.set("embedded", await build(embeddedEngine({ dataDir: dir })))
    },
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
    },
    on: (kind, effect) =>
      Effect.runPromise(effect.pipe(
        Effect.provide(contexts.get(kind)!),
        Effect.provideService(References.MinimumLogLevel, "None"),
        Effect.timeout("30 seconds")
      ) as Effect.Effect<any, any>)
  }
}
