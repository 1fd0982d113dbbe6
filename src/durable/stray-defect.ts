/**
 * A run's stored reply that is not the run's result: Effect Cluster's "Entity type '…' not
 * registered" defect, which a runner stores for every message of its shards when it holds shards but
 * never registered the workflow (a process that only polls but was started as a runner, a runner
 * deployed without `d.layer`). Left alone it would be every later `poll`'s, `result`'s and `join`'s
 * answer, and the run would never finish. It is cleared instead (`Sharding.reset`, only if it is still
 * the latest reply), so the run's message is unprocessed again and a runner with the workflow picks it
 * up; until then the run counts as still running. (Stray replies of the run's activities too: a
 * replay would take them as the activities' results.)
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Sharding from "effect/cluster/Sharding"
import * as Snowflake from "effect/cluster/Snowflake"
import * as SqlClient from "effect/sql/SqlClient"

const notRegistered = /^Entity type '.*' not registered$/

/** Whether `exit` is the cluster's "entity type not registered" defect rather than the run's own end. */
export const isStrayDefect = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) &&
  exit.cause.reasons.length > 0 &&
  exit.cause.reasons.every((r) => Cause.isDieReason(r) && r.defect instanceof Error && notRegistered.test(r.defect.message))

/**
 * Clears every stray reply of execution `executionId`: the run's and its activities' (a replay would
 * read an activity's stray reply back as the activity's result and end the run with it). Each is reset
 * only if it is still the latest reply of its message, so the messages are unprocessed again and read
 * anew. Where the engine is not a cluster on SQL (`Sharding` and a `SqlClient` with Effect Cluster's
 * `cluster_` tables: the embedded and PostgreSQL engines), nothing to do.
 */
export const clearStrayReplies = (executionId: string): Effect.Effect<void> =>
  Effect.gen(function*() {
    const sharding = yield* Effect.serviceOption(Sharding.Sharding)
    const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
    if (Option.isNone(sharding) || Option.isNone(sql)) return
    const client = sql.value
    const stray = yield* client<{ readonly request_id: string | number | bigint; readonly reply_id: string | number | bigint }>`
      select m.request_id as request_id, r.id as reply_id
      from cluster_messages m join cluster_replies r on r.id = m.last_reply_id
      where m.entity_id = ${executionId} and r.payload like ${"%Entity type %not registered%"}`
    for (const row of stray) {
      yield* sharding.value.reset(Snowflake.Snowflake(String(row.request_id)), { expectedReplyId: Snowflake.Snowflake(String(row.reply_id)) })
    }
    if (stray.length > 0) yield* sharding.value.pollStorage
  }).pipe(Effect.ignore)
