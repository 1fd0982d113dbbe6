/**
 * One runner of a multi-process Effect Cluster on PostgreSQL. Runners share the database (messages,
 * replies and the runs' activity results in `SqlMessageStorage`; runner membership and shard locks in
 * `SqlRunnerStorage`) and call each other over TCP with Effect's socket RPC (`NodeClusterSocket` of
 * `@effect/platform-node-shared`, which runs on Node 20: `@effect/platform-node`'s HTTP runner needs
 * undici for Node 22). Shards (and the runs in them) spread over the live runners; when a runner dies
 * its shard locks go with its database session, the others ping it, drop it, take its shards, and
 * replay its runs from storage.
 */
import type * as NodeClusterSocket from "@effect/platform-node-shared/NodeClusterSocket"
import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SocketRunner from "effect/cluster/SocketRunner"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import type { ApprovalInbox } from "../approval-inbox.ts"
import type { RunJournal } from "../run-journal.ts"
import { durableStoreSql } from "../sql-store.ts"
import { installedVersion } from "../../internal/installed-version.ts"
import { shownValue } from "../../internal/shown-value.ts"
import { clusterCrypto } from "./cluster-crypto.ts"
import type { ToolIntents } from "../tool-intents.ts"
import { EngineUnavailable, orUnavailable } from "./engine-unavailable.ts"

/** Options of {@link postgresRunner}. */
export interface PostgresRunnerOptions {
  /** The PostgreSQL every runner of the cluster shares (`postgres://user@host:port/db`). */
  readonly url: string | Redacted.Redacted
  /**
   * The address other runners reach this one on (host and port). Required unless `clientOnly`; every
   * runner needs its own.
   */
  readonly runnerAddress?: { readonly host: string; readonly port: number }
  /** Where this runner listens, when it differs from `runnerAddress` (e.g. `0.0.0.0` in a container). */
  readonly listenAddress?: { readonly host: string; readonly port: number }
  /**
   * A process that starts, polls and decides runs but runs none (no server, no shards): a web
   * front end beside the runners.
   */
  readonly clientOnly?: boolean
  /** Overrides of Effect Cluster's sharding settings. `shardsPerGroup` must agree across runners. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Service"]>
  /** Settings of the connection pool (`maxConnections`, `startupParameters`, …). */
  readonly pool?: Omit<PgClient.PgPoolConfig, "url">
}

const socketModule = "@effect/platform-node-shared/NodeClusterSocket"

/**
 * Effect's Node socket transport for cluster RPC, loaded when a runner starts. It lives in
 * `@effect/platform-node-shared` (an optional peer: only PostgreSQL runners need it), whose minor
 * version must match the installed `effect`'s; a missing or mismatched package is reported with the
 * command that installs the right one.
 */
const loadClusterSocket = Effect.tryPromise({
  try: () => import(socketModule) as Promise<typeof NodeClusterSocket>,
  catch: (cause) => {
    const effectVersion = installedVersion("effect")
    const platformVersion = installedVersion("@effect/platform-node-shared")
    const install = `npm install @effect/platform-node-shared@~${effectVersion ?? "<your effect version>"}`
    return new EngineUnavailable({
      engine: "postgres",
      reason: platformVersion === undefined
        ? `PostgreSQL runners need @effect/platform-node-shared (Effect's Node socket transport): ${install}`
        : `@effect/platform-node-shared ${platformVersion} does not load with effect ${effectVersion ?? "(unknown)"}; their minor versions must match: ${install} (${cause instanceof Error ? cause.message : String(cause)})`,
      cause
    })
  }
})

const address = (a: { readonly host: string; readonly port: number }) => RunnerAddress.make(a.host, a.port)

/** What is wrong with an address (a host and a TCP port), for a plain caller or an unset variable. */
const addressProblem = (name: string, a: unknown): string | undefined => {
  const { host, port } = (typeof a === "object" && a !== null ? a : {}) as { readonly host?: unknown; readonly port?: unknown }
  if (typeof host !== "string" || host === "") return `${name}.host must be a host name or address, got ${shownValue(host)} (an environment variable left unset?)`
  if (!(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65_535)) return `${name}.port must be a TCP port (a whole number in [0, 65535]), got ${shownValue(port)}`
  return undefined
}

/** Why `options` cannot make an engine, before anything connects; undefined when they can. */
const configProblem = (options: PostgresRunnerOptions, clientOnly: boolean): string | undefined => {
  const url: unknown = options.url
  if (!Redacted.isRedacted(url) && (typeof url !== "string" || url === "")) return `url must be a PostgreSQL URL (postgres://user@host:port/db), got ${shownValue(url)} (DATABASE_URL left unset?)`
  if (!clientOnly && options.runnerAddress === undefined) return "a runner needs a runnerAddress (or clientOnly: true)"
  if (options.runnerAddress !== undefined) {
    const problem = addressProblem("runnerAddress", options.runnerAddress)
    if (problem !== undefined) return problem
  }
  return options.listenAddress === undefined ? undefined : addressProblem("listenAddress", options.listenAddress)
}

/**
 * Our defaults (each overridable through `shardingConfig`), so that recovery takes seconds: a
 * graceful stop waits at most 1 s per entity (Effect: 15 s); a dead runner is noticed by ping within
 * about 2 s (Effect: one minute) and its shard locks expire 6 s after its last refresh (refreshed every
 * 2 s; Effect: 35 s and 10 s), so its runs move to the live runners within about 6-10 s.
 */
export const clusterDefaults = {
  entityTerminationTimeout: "1 second",
  runnerHealthCheckInterval: "2 seconds",
  shardLockRefreshInterval: "2 seconds",
  shardLockExpiration: "6 seconds"
} as const

/**
 * The engine and stores of one runner (or client) of a cluster on PostgreSQL. Every runner process
 * provides this with the durable agents' layers; the tables are created on first start.
 *
 * @example
 * ```ts
 * // runner 1 and runner 2, two processes, one database
 * const engine = postgresRunner({ url: process.env.DATABASE_URL!, runnerAddress: { host: "10.0.0.5", port: 34431 } })
 * Layer.launch(d.layer.pipe(Layer.provideMerge(engine))).pipe(Effect.runFork)
 * ```
 */
export const postgresRunner = (
  options: PostgresRunnerOptions
): Layer.Layer<WorkflowEngine.WorkflowEngine | ToolIntents | ApprovalInbox | RunJournal | SqlClient.SqlClient, EngineUnavailable> => {
  const clientOnly = options.clientOnly === true
  const refused = configProblem(options, clientOnly)
  if (refused !== undefined) return Layer.unwrap(Effect.fail(new EngineUnavailable({ engine: "postgres", reason: refused })))
  const config = ShardingConfig.layer({
    ...clusterDefaults,
    entityMessagePollInterval: "1 second",
    ...(options.runnerAddress === undefined ? {} : { runnerAddress: Option.some(address(options.runnerAddress)) }),
    ...(options.listenAddress === undefined ? {} : { runnerListenAddress: Option.some(address(options.listenAddress)) }),
    ...options.shardingConfig
  })
  const transport = Layer.unwrap(Effect.map(loadClusterSocket, (socket) =>
    clientOnly
      ? SocketRunner.layerClientOnly.pipe(Layer.provide(socket.layerClientProtocol))
      : SocketRunner.layer.pipe(
        Layer.provide([socket.layerSocketServer, socket.layerClientProtocol]),
        Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(socket.layerClientProtocol)))
      )
  ))
  const sharding = transport.pipe(
    Layer.provideMerge(SqlMessageStorage.layer),
    Layer.provide(SqlRunnerStorage.layer),
    Layer.provide(config),
    Layer.provide(RpcSerialization.layerNdjson)
  )
  const url = typeof options.url === "string" ? Redacted.make(options.url) : options.url
  return orUnavailable("postgres", ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(sharding),
    Layer.provideMerge(durableStoreSql()),
    Layer.provide(clusterCrypto),
    Layer.provideMerge(PgClient.layer({ ...options.pool, url }))
  ))
}
