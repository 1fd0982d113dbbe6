/**
 * The embedded engine: durable runs in one process, with no server, on PGlite files under `dataDir`.
 * Its workflow engine is our own local engine (`local-workflow-engine.ts`): a run's step is one write
 * into PGlite (the step's recorded result, with the step's journal events riding along,
 * `pglite-workflow-store.ts`), cancellations are known in memory (`cancellations-in-memory.ts`), and
 * the stores of durable runs (tool intents, approvals, the run list) are the SQL ones every engine shares.
 * A process started again on the same directory picks up the runs that were in flight and replays
 * them from their recorded steps.
 */
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ShardingConfig from "effect/cluster/ShardingConfig"
import type * as SqlClient from "effect/sql/SqlClient"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { ApprovalInbox } from "../approval-inbox.ts"
import { RunJournal } from "../run-journal.ts"
import { durableStoreSql } from "../sql-store.ts"
import { ToolIntents } from "../tool-intents.ts"
import { cancellationsInMemory } from "../cancellations-in-memory.ts"
import { dataDirLock } from "./data-dir-lock.ts"
import { EngineUnavailable, orUnavailable } from "./engine-unavailable.ts"
import { makeLocalWorkflowEngine } from "./local-workflow-engine.ts"
import { RunSettled } from "../run-settled.ts"
import { PgliteSession, pgliteSession } from "./pglite-client.ts"
import { makePgliteStores } from "./pglite-workflow-store.ts"

/** Options of {@link embeddedEngine}. */
export interface EmbeddedEngineOptions {
  /** Where the engine keeps its files (created when missing). One process at a time may open it. */
  readonly dataDir: string
  /**
   * A process that starts, polls, decides or cancels runs but runs none (it does not provide
   * `d.layer`): what it records waits in the directory for the next process that runs them.
   */
  readonly clientOnly?: boolean
  /**
   * @deprecated Ignored: the embedded engine no longer runs Effect Cluster (a step is one write of its
   * own engine). Kept so that code written for the earlier engine still compiles.
   */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Service"]>
}

/**
 * Internal: runs in flight written by the Effect Cluster engine of earlier versions (its
 * `cluster_messages` table) would be silently left behind: refused, with what to do.
 */
export const refuseClusterRuns = Effect.gen(function*() {
  const session = yield* PgliteSession
  const [present] = yield* session.pipeline([{ text: "select to_regclass('cluster_messages') is not null as present", params: [] }])
  if (present?.[0]?.["present"] !== true) return
  const [rows] = yield* session.pipeline([{ text: "select count(*)::int as n from cluster_messages where not processed and tag = 'run'", params: [] }])
  const inFlight = Number(rows?.[0]?.["n"] ?? 0)
  if (inFlight > 0) {
    return yield* new EngineUnavailable({
      engine: "embedded",
      reason: `the directory holds ${inFlight} run(s) in flight written by the Effect Cluster engine of an earlier version; ` +
        "finish them with that version (or drop the cluster_* tables to abandon them)"
    })
  }
})

/**
 * A `WorkflowEngine` that survives restarts, in one process with no server, with the stores of
 * durable runs (`ToolIntents`, `ApprovalInbox`, `RunJournal`) in the same database. The layer also
 * provides its `SqlClient`, so an application's own tables can live (and commit) beside the runs.
 *
 * @example
 * ```ts
 * const engine = embeddedEngine({ dataDir: "./.agent-runs" })
 * await Effect.runPromise(durableAgent.run("What is 2 + 2?", { runId: "r1" }).pipe(
 *   Effect.provide(durableAgent.layer.pipe(Layer.provideMerge(engine)))
 * ))
 * ```
 */
export const embeddedEngine = (
  options: EmbeddedEngineOptions
): Layer.Layer<WorkflowEngine.WorkflowEngine | ToolIntents | ApprovalInbox | RunJournal | SqlClient.SqlClient, EngineUnavailable> => {
  const engine = Layer.effectContext(Effect.gen(function*() {
    yield* refuseClusterRuns
    const { store, journal } = yield* makePgliteStores
    // A run's entry in the run list is written at once (not riding along with the run's next write):
    // it says which workflow holds the run id, before the run starts (`ApprovalInbox.register`).
    const inbox = cancellationsInMemory(yield* ApprovalInbox)
    const { engine: workflows, settled } = yield* makeLocalWorkflowEngine(store, { runner: options.clientOnly !== true })
    return Context.make(WorkflowEngine.WorkflowEngine, workflows).pipe(
      Context.add(RunSettled, settled),
      Context.add(ApprovalInbox, inbox),
      Context.add(RunJournal, journal),
      Context.add(ToolIntents, yield* ToolIntents)
    )
  }))
  return orUnavailable("embedded", engine.pipe(
    Layer.provide(durableStoreSql()),
    Layer.provideMerge(pgliteSession({ dataDir: join(options.dataDir, "pg") })),
    Layer.provide(dataDirLock(options.dataDir))
  ))
}
