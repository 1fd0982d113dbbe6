/**
 * The embedded durable engine: Effect Cluster's workflow engine in one process, its message storage
 * in PGlite files under `dataDir`. No server; a process restarted on the same directory picks up the
 * runs that were in flight (Sharding resets and re-reads every unprocessed message of its shards when
 * it acquires them) and replays them from their recorded activities.
 */
import { join } from "node:path"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import type * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SingleRunner from "effect/cluster/SingleRunner"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import type { ApprovalInbox } from "../approval-inbox.ts"
import type { RunJournal } from "../run-journal.ts"
import { durableStoreSql } from "../sql-store.ts"
import type { ToolIntents } from "../tool-intents.ts"
import { clusterCrypto } from "./cluster-crypto.ts"
import { dataDirLock } from "./data-dir-lock.ts"
import { type EngineUnavailable, orUnavailable } from "./engine-unavailable.ts"
import { pgliteClient } from "./pglite-client.ts"

/**
 * Stopping the process takes about a second: a run's step still in flight after that is left to the
 * replay of the next start (Effect's default waits 15 s per entity).
 */
export const fastShutdown = { entityTerminationTimeout: "1 second" } as const

/** Options of {@link embeddedEngine}. */
export interface EmbeddedEngineOptions {
  /** Where the engine keeps its files (created when missing). One process at a time may open it. */
  readonly dataDir: string
  /** Overrides of Effect Cluster's sharding settings (tests shorten poll intervals). */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Service"]>
  /**
   * A process that starts, polls or decides runs but runs none (it does not provide `d.layer`): it
   * holds no shards, so it never answers for the runs in flight; they wait in the directory for the
   * next process that runs them.
   */
  readonly clientOnly?: boolean
}

/**
 * A `WorkflowEngine` that survives restarts, in one process with no server, with the stores of
 * durable runs (`ToolIntents`, `ApprovalInbox`) in the same database. The layer also provides its
 * `SqlClient`, so an application's own tables can live (and commit) beside the runs.
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
): Layer.Layer<WorkflowEngine.WorkflowEngine | ToolIntents | ApprovalInbox | RunJournal | SqlClient.SqlClient, EngineUnavailable> =>
  orUnavailable("embedded", ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SingleRunner.layer({
      runnerStorage: "memory",
      shardingConfig: {
        ...fastShutdown,
        entityMessagePollInterval: "1 second",
        ...options.shardingConfig,
        ...(options.clientOnly === true ? { runnerAddress: Option.none() } : {})
      }
    })),
    Layer.provideMerge(durableStoreSql()),
    Layer.provide(clusterCrypto),
    Layer.provideMerge(pgliteClient({ dataDir: join(options.dataDir, "pg") })),
    Layer.provide(dataDirLock(options.dataDir))
  ))
