/**
 * Engines for the durable tests: the in-memory engine; Effect Cluster's workflow engine (the
 * PostgreSQL runners' engine) on an in-memory message storage whose driver outlives the runner; and
 * our local workflow engine (the embedded engine's) on an in-memory store that outlives it. A test can
 * stop a runner in the middle of a run (its fibers are interrupted, as when a process dies) and start
 * a fresh one on the same storage, which replays the run. `engineKinds` lists the two that replay.
 */
import { Context, Duration, Effect, Exit, Layer, Scope } from "effect"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as MessageStorage from "effect/cluster/MessageStorage"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import { ApprovalInbox, RunJournal, ToolIntents } from "../../src/durable/index.ts"
import { localWorkflowEngine } from "../../src/durable/engines/local-workflow-engine.ts"
import { memoryWorkflowStore } from "../../src/durable/engines/workflow-store.ts"

/** The stores of durable runs, built once so that successive runners share them (as a database would). */
export const sharedStores = (): Effect.Effect<Context.Context<ToolIntents | ApprovalInbox | RunJournal>> =>
  Layer.build(Layer.mergeAll(ToolIntents.memory, ApprovalInbox.memory, RunJournal.memory)).pipe(Effect.scoped)

/** The engines whose runs survive a runner's stop: Effect Cluster's and our local engine. */
export type EngineKind = "cluster" | "local"
export const engineKinds: ReadonlyArray<EngineKind> = ["cluster", "local"]

/** Storage that outlives runners, and the engine of a runner on it. */
export interface SharedStorage {
  readonly kind: EngineKind
  readonly engine: () => Layer.Layer<WorkflowEngine>
}

/** Storage that outlives runners: the message storage's memory driver (cluster), or a memory workflow store (local). */
export const sharedStorage = (kind: EngineKind = "cluster"): Effect.Effect<SharedStorage> =>
  kind === "local"
    ? Effect.sync(() => {
      const store = memoryWorkflowStore()
      return { kind, engine: () => localWorkflowEngine(store) }
    })
    : Effect.map(
      Effect.scoped(Effect.map(Layer.build(MessageStorage.MemoryDriver.layer), (context) => Context.get(context, MessageStorage.MemoryDriver))),
      (driver) => ({ kind, engine: () => clusterEngine(driver) })
    )

/** A cluster workflow engine (one runner) on `driver`'s storage. */
export const clusterEngine = (driver: MessageStorage.MemoryDriver["Service"]): Layer.Layer<WorkflowEngine> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provide(Sharding.layer),
    Layer.provide(Runners.layerNoop),
    Layer.provide(Layer.succeed(MessageStorage.MessageStorage, driver.storage)),
    Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer({ entityMessagePollInterval: Duration.millis(50), sendRetryInterval: Duration.millis(10), entityTerminationTimeout: Duration.millis(10) }))
  ) as Layer.Layer<WorkflowEngine>

/**
 * A runner: `layer` started in a scope of its own; `stop` closes it (interrupting whatever it runs),
 * as a killed process stops.
 */
export const startRunner = <ROut, E>(layer: Layer.Layer<ROut, E>): Effect.Effect<{ readonly context: Context.Context<ROut>; readonly stop: Effect.Effect<void> }> =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Effect.orDie(Layer.buildWithScope(layer, scope))
    return { context, stop: Scope.close(scope, Exit.void) }
  })
