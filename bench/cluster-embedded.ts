/**
 * The embedded engine as it was before issue #37: Effect Cluster's workflow engine in one process
 * (`SingleRunner`, in-memory runner storage) with its message storage and our stores on PGlite files.
 * Kept here only so that the durable benches measure the engine that replaced it side by side, in the
 * same process, on the same machine.
 */
import { join } from "node:path"
import * as Layer from "effect/Layer"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as SingleRunner from "effect/cluster/SingleRunner"
import { durableStoreSql } from "../src/durable/sql-store.ts"
import { clusterCrypto } from "../src/durable/engines/cluster-crypto.ts"
import { pgliteClient } from "../src/durable/engines/pglite-client.ts"

/** Effect Cluster's engine on PGlite files under `dataDir` (the embedded engine before #37). */
export const clusterOnPglite = (dataDir: string) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SingleRunner.layer({ runnerStorage: "memory", shardingConfig: { entityTerminationTimeout: "1 second", entityMessagePollInterval: "1 second" } })),
    Layer.provideMerge(durableStoreSql()),
    Layer.provide(clusterCrypto),
    Layer.provideMerge(pgliteClient({ dataDir: join(dataDir, "pg") }))
  )
