/**
 * `effect-agent-dsl/durable/postgres`: one runner of a multi-process Effect Cluster on PostgreSQL for
 * durable runs. Needs the optional peer `@effect/sql-pg`; kept off `effect-agent-dsl/durable` so that
 * users of the other engines never load it. See "Deploying durable runners" in docs/guide/durable.md.
 *
 * @example
 * import { durable } from "effect-agent-dsl/durable"
 * import { postgresRunner } from "effect-agent-dsl/durable/postgres"
 * const runner = durable(myAgent).layer.pipe(Layer.provideMerge(postgresRunner({ url, runnerAddress: { host: "10.0.0.5", port: 34431 } })))
 *
 * @module effect-agent-dsl/durable/postgres
 */
export { postgresRunner, type PostgresRunnerOptions } from "./engines/postgres-runner.ts"
export { EngineUnavailable } from "./engines/engine-unavailable.ts"
