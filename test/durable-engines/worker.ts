/**
 * The worker process of the crash tests (started with `node --import tsx`, killed with SIGKILL).
 *
 * It runs durable agents on the engine named by its environment: `ENGINE=embedded` (`DATA_DIR`) or
 * `ENGINE=postgres` (`DATABASE_URL`, and `RUNNER_PORT` for a runner, none for a client). The agents'
 * tools write every execution as a row of the engine's own database (`executions`), so the test counts
 * them from outside, after the worker is dead. `KILL_AT` names the point where the worker kills itself
 * (see `checkpoint`); a restarted worker gets no `KILL_AT`.
 *
 * Modes (`MODE`): `run` (start or join `RUN_ID` and wait for its end), `serve` (a runner that only
 * serves), `start` (start `RUN_IDS` and wait for all), `decide` (approve what `RUN_ID` waits for), `result`,
 * `poll` and `cancel` (processes without the workflows: client-only with `CLIENT_ONLY=1`), `follow` (prints
 * every event of `RUN_ID` after the id `AFTER` as `RESULT { id, tag, runId }`, then `RESULT { done }`).
 * `FOLLOW_PORT` serves `GET /runs/<id>/events` (`followResponse`, SSE with `Last-Event-ID`) and keeps
 * the worker up after its run.
 * Each end is printed as one line `RESULT <json>` on stdout.
 */
import { createServer } from "node:http"
import { Cause, Context, Effect, Exit, Fiber, Layer, Option, Schedule, Schema, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { agent, Decision, text, tool, toolCalls } from "../../src/index.ts"
import type { LlmMessage, ModelRequest } from "../../src/index.ts"
import { durable, followResponse, type Reconcile, Reconciled, ToolIntents } from "../../src/durable/index.ts"
import { nodeHandler } from "../../src/node/node-handler.ts"
import { embeddedEngine } from "../../src/durable/embedded.ts"
import { postgresRunner } from "../../src/durable/postgres.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const env = process.env
const killAt = env.KILL_AT ?? ""
const slowTools = Number(env.SLOW_TOOLS_MS ?? 0)
/**
 * `pay` as a Promise that ignores its signal (a `fetch` without one): it sleeps `SLOW_PAY_MS`, or with
 * `PAY_GATE=1` waits until the test writes a row into `gates`, then pays.
 */
const slowPay = Number(env.SLOW_PAY_MS ?? 0)
/** A sleep after a tool's effect (payment, reservation) and before it returns: kills land there too. */
const slowAfter = Number(env.SLOW_AFTER_MS ?? 0)
const afterEffect = Effect.suspend(() => (slowAfter > 0 ? Effect.sleep(slowAfter) : Effect.void))
const payGate = env.PAY_GATE === "1"

/** The engine's services, for code that runs as a plain Promise (set once the engine is up). */
let services: Context.Context<SqlClient.SqlClient> | undefined
const runSql = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>): Promise<A> => Effect.runPromise(Effect.provide(effect, services!))

/** Dies here (SIGKILL, no cleanup) when `KILL_AT` names this point. `later`: right after the current step returns. */
const checkpoint = (point: string, later = false) => {
  if (point !== killAt) return
  const die = () => process.kill(process.pid, "SIGKILL")
  // A microtask runs before any I/O completes: the step has returned, its result is not yet stored.
  if (later) queueMicrotask(die)
  else die()
}

/** The order a request is about: the run's input says `… for <order>`. */
const orderOf = (request: ModelRequest) => {
  const user = request.messages.find((m) => m.role === "user")
  return /for (\S+)/.exec(user?.content ?? "")?.[1] ?? "unknown"
}

const toolMessages = (request: ModelRequest) => request.messages.filter((m): m is Extract<LlmMessage, { role: "tool" }> => m.role === "tool")

/**
 * The model of the shopping agent, a function of what it is asked (so a replay asks the same):
 * turn 1 looks up and reserves, turn 2 pays, turn 3 answers with every tool result it saw.
 */
const shopperModel = scriptedModel((request: ModelRequest) => {
  const seen = toolMessages(request)
  const turn = seen.length === 0 ? 1 : seen.length === 2 ? 2 : 3
  checkpoint(`before-model-${turn}`)
  const answer = turn === 1
    ? toolCalls([{ id: "c1", name: "lookup", arguments: { item: "lamp", order: orderOf(request) } }, { id: "c2", name: "reserve", arguments: { item: "lamp", order: orderOf(request) } }])
    : turn === 2
    ? toolCalls([{ id: "c3", name: "pay", arguments: { order: orderOf(request), amount: 30 } }])
    : text(JSON.stringify(seen.map((m) => [m.name, m.content])))
  checkpoint(`after-model-${turn}`, true)
  // The last turn writes which process answered it (the runner that finished the run).
  if (turn === 3 && services !== undefined) return runSql(sqlInsert("answer", orderOf(request), "m3")).then(() => answer)
  return answer
})

const record = (toolName: string, order: string, callId: string, key: string | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`insert into executions (tool, order_id, call_id, idem_key, pid) values (${toolName}, ${order}, ${callId}, ${key ?? null}, ${process.pid})`
    if (slowTools > 0) yield* Effect.sleep(slowTools)
  }).pipe(Effect.orDie)

const lookup = tool("lookup", {
  args: Schema.Struct({ item: Schema.String, order: Schema.String }),
  effect: "readOnly",
  run: ({ item, order }, { toolCallId }) =>
    Effect.gen(function*() {
      yield* record("lookup", order, toolCallId, undefined)
      checkpoint("in-tool-lookup")
      checkpoint("after-tool-lookup", true)
      return `${item}: 30 EUR, in stock`
    })
})

const reserve = tool("reserve", {
  args: Schema.Struct({ item: Schema.String, order: Schema.String }),
  effect: "idempotent",
  run: ({ item, order }, { toolCallId, idempotencyKey }) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* record("reserve", order, toolCallId, idempotencyKey)
      // The service the tool calls deduplicates on the key, as an idempotent API does.
      yield* sql`insert into reservations (idem_key, item) values (${idempotencyKey ?? "none"}, ${item}) on conflict (idem_key) do nothing`.pipe(Effect.orDie)
      yield* afterEffect
      checkpoint("in-tool-reserve")
      checkpoint("after-tool-reserve", true)
      return `reserved ${item}`
    })
})

const payNow = (order: string, amount: number, toolCallId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const receipt = `paid ${amount} for ${order}`
    yield* sql`insert into payments (order_id, call_id, receipt) values (${order}, ${toolCallId}, ${receipt})`.pipe(Effect.orDie)
    return receipt
  })

const pay = tool("pay", {
  args: Schema.Struct({ order: Schema.String, amount: Schema.Finite }),
  // mutating, the default: a lost outcome goes to `reconcile`
  run: ({ order, amount }, { toolCallId }) =>
    slowPay > 0 || payGate
      ? (async () => {
        // Ignores its signal: once started it pays, whatever happens to the run around it.
        await runSql(sqlInsert("pay", order, toolCallId))
        await new Promise((r) => setTimeout(r, slowPay))
        while (payGate && (await runSql(gateOpen)) === false) await new Promise((r) => setTimeout(r, 100))
        return runSql(payNow(order, amount, toolCallId))
      })()
      : Effect.gen(function*() {
        yield* record("pay", order, toolCallId, undefined)
        const receipt = yield* payNow(order, amount, toolCallId)
        yield* afterEffect
        checkpoint("in-tool-pay")
        return receipt
      })
})

const gateOpen = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return (yield* sql`select 1 from gates`).length > 0
})

const sqlInsert = (toolName: string, order: string, callId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`insert into executions (tool, order_id, call_id, idem_key, pid) values (${toolName}, ${order}, ${callId}, ${null}, ${process.pid})`
  })

/** Looks at the payments table, as a real handler asks the payment provider. */
const reconcile = (unknown: { readonly toolCallId: string; readonly args: unknown }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const order = String((unknown.args as { readonly order?: unknown }).order)
    const rows = yield* sql<{ readonly receipt: string }>`select receipt from payments where order_id = ${order} and call_id = ${unknown.toolCallId}`.pipe(Effect.orDie)
    const row = rows[0]
    return row === undefined ? Reconciled.runAgain : Reconciled.result(row.receipt)
  })

const shopper = agent("shopper").model(shopperModel).tools({ lookup, reserve, pay })

/** The approval agent: asks to transfer, waits for a human, then answers. `maxDuration` from `MAX_DURATION_MS`. */
const bankModel = scriptedModel((request: ModelRequest) => {
  const seen = toolMessages(request)
  return seen.length === 0 ? toolCalls([{ id: "t1", name: "transfer", arguments: { amount: 500, order: orderOf(request) } }]) : text(`done: ${seen.map((m) => m.content).join("; ")}`)
})
const transfer = tool("transfer", {
  args: Schema.Struct({ amount: Schema.Finite, order: Schema.String }),
  effect: "idempotent",
  needsApproval: true,
  run: ({ amount, order }, { toolCallId, idempotencyKey }) => Effect.as(record("transfer", order, toolCallId, idempotencyKey), `sent ${amount}`)
})
const banker = agent("banker").model(bankModel).tools({ transfer }).budget(
  env.MAX_DURATION_MS === undefined ? {} : { maxDuration: Number(env.MAX_DURATION_MS) }
)

// The handler runs inside the call's activity, in the run's context, which has the engine's SqlClient.
const shop = durable(shopper, {
  reconcile: reconcile as unknown as Reconcile,
  ...(env.HANDOVER_WAIT_MS === undefined ? {} : { handOverWait: Number(env.HANDOVER_WAIT_MS) })
})
const bank = durable(banker)

/** ToolIntents with a kill point right after a mutating call's outcome is written beside its claim. */
const intentsWithCheckpoint = Layer.effect(ToolIntents)(Effect.gen(function*() {
  const intents = yield* ToolIntents
  return {
    ...intents,
    finish: (key: string, outcome: Schema.Json) =>
      Effect.tap(intents.finish(key, outcome), () => Effect.sync(() => checkpoint(`after-finish-${key.split("/").at(-1)}`, true)))
  }
}))

/** The tables the tools write to (created by whichever process comes first). */
const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create table if not exists executions (tool text not null, order_id text not null, call_id text not null, idem_key text, pid integer not null, at timestamptz not null default now())`
  yield* sql`create table if not exists reservations (idem_key text primary key, item text not null)`
  yield* sql`create table if not exists gates (name text)`
  yield* sql`create table if not exists payments (order_id text not null, call_id text not null, receipt text not null)`
}).pipe(Effect.ignore)

const engine = env.ENGINE === "postgres"
  ? postgresRunner({
    url: env.DATABASE_URL!,
    ...(env.RUNNER_PORT === undefined ? { clientOnly: true } : { runnerAddress: { host: "127.0.0.1", port: Number(env.RUNNER_PORT) } }),
    shardingConfig: {
      runnerHealthCheckInterval: "1 second",
      refreshAssignmentsInterval: "1 second",
      entityMessagePollInterval: "500 millis",
      shardsPerGroup: 30,
      ...(env.TERMINATION_MS === undefined ? {} : { entityTerminationTimeout: Number(env.TERMINATION_MS) })
    }
  })
  : embeddedEngine({ dataDir: env.DATA_DIR!, clientOnly: env.CLIENT_ONLY === "1" })

const agents = Layer.mergeAll(shop.layer, bank.layer).pipe(Layer.provide(intentsWithCheckpoint))
// `MODE=poll`: a process that only polls, without the workflows (as the README allows).
const runtime: typeof engine = (env.ENGINE === "postgres" && env.RUNNER_PORT === undefined) || env.MODE === "poll" || env.MODE === "cancel" || env.MODE === "follow" ? engine : agents.pipe(Layer.provideMerge(engine))

const print = (value: unknown) => Effect.sync(() => process.stdout.write(`RESULT ${JSON.stringify(value)}\n`))
const ended = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.result(effect), (r) => print(r._tag === "Success" ? { ok: r.success } : { error: (r.failure as { _tag?: string })._tag ?? String(r.failure), detail: r.failure }))

const which = env.AGENT === "bank" ? bank : shop
/** The input of run `runId`: the run id doubles as the order id, so rows can be told apart per run. */
const input = (runId: string) => (env.AGENT === "bank" ? `send 500 to Bob for ${runId}` : `buy a lamp for ${runId}`)

/** `FOLLOW_PORT`: the runs' events over SSE, from this process's engine. */
const serveEvents = Effect.gen(function*() {
  if (env.FOLLOW_PORT === undefined) return
  const context = yield* Effect.context<Layer.Success<typeof engine>>()
  const server = createServer(nodeHandler((request) => {
    const runId = /^\/runs\/([^/]+)\/events$/.exec(new URL(request.url).pathname)?.[1]
    if (runId === undefined) return new Response("not found", { status: 404 })
    return Effect.runPromise(followResponse(which, decodeURIComponent(runId), { request, pollInterval: "50 millis" }).pipe(Effect.provide(context)))
  }))
  yield* Effect.callback<void>((resume) => void server.listen(Number(env.FOLLOW_PORT), "127.0.0.1", () => resume(Effect.void)))
})

const main = Effect.gen(function*() {
  yield* setup
  services = yield* Effect.context<SqlClient.SqlClient>()
  yield* serveEvents
  yield* Effect.sync(() => process.stdout.write("READY\n"))
  switch (env.MODE) {
    case "serve":
      return yield* Effect.never
    case "start": {
      const ids = (env.RUN_IDS ?? "").split(",")
      yield* Effect.forEach(ids, (runId) => which.start(input(runId), { runId }), { concurrency: "unbounded" })
      return yield* Effect.forEach(ids, (runId) => ended(which.result(runId)), { concurrency: "unbounded" })
    }
    case "poll": {
      // Polls `RUN_ID` every 200 ms for `POLL_MS`, then prints what it last saw.
      const until = Date.now() + Number(env.POLL_MS ?? 3000)
      let last: unknown = "none"
      while (Date.now() < until) {
        const r = yield* Effect.result(which.poll(env.RUN_ID!))
        last = r._tag === "Success" ? (Option.isSome(r.success) ? r.success.value._tag : "none") : { error: (r.failure as { _tag?: string })._tag }
        yield* Effect.sleep("200 millis")
      }
      return yield* print({ polled: last })
    }
    case "follow": {
      yield* Stream.runForEach(which.follow(env.RUN_ID!, { after: Number(env.AFTER ?? 0), pollInterval: "50 millis" }), (e) =>
        print({ id: e.id, tag: e.event._tag, runId: e.event.runId }))
      return yield* print({ done: true })
    }
    case "cancel": {
      yield* which.cancel(env.RUN_ID!, "cancelled by the test")
      return yield* print({ cancelled: env.RUN_ID })
    }
    case "decide": {
      const waiting = yield* which.poll(env.RUN_ID!).pipe(Effect.orDie)
      if (Option.isNone(waiting) || waiting.value._tag !== "Suspended") return yield* print({ error: "NotWaiting" })
      const decisions = Object.fromEntries(waiting.value.pending.map((p) => [p.id, Decision.approve]))
      yield* which.decide(env.RUN_ID!, decisions).pipe(Effect.orDie)
      return yield* print({ decided: Object.keys(decisions) })
    }
    case "result": {
      // `result` answers a wait for decisions at once: wait past it for the run's end.
      const end = which.result(env.RUN_ID!).pipe(
        Effect.flatMap((r) => (r._tag === "Suspended" ? Effect.fail("waiting" as const) : Effect.succeed(r))),
        Effect.retry({ while: (e) => e === "waiting", schedule: Schedule.spaced("200 millis") })
      )
      return yield* ended(end)
    }
    default: {
      yield* ended(which.run(input(env.RUN_ID!), { runId: env.RUN_ID! }))
      // A runner that got a wait for decisions stays up, as a deployed one does, until it is killed.
      if (env.STAY === "1" || env.FOLLOW_PORT !== undefined) yield* Effect.never
    }
  }
})

const started = performance.now()
const fiber = Effect.runFork(Effect.gen(function*() {
  // The engine's layers built (an existing store opened, migrations checked, the runner started).
  const context = yield* Layer.build(runtime)
  process.stdout.write(`TIMING ${JSON.stringify({ engineReadyMs: Math.round(performance.now() - started), processReadyMs: Math.round(process.uptime() * 1000) })}\n`)
  return yield* main.pipe(Effect.provide(context))
}).pipe(Effect.scoped))
// SIGTERM: a graceful shutdown (the engine's layers close: shards handed off, entities stopped).
process.on("SIGTERM", () => {
  const stopping = performance.now()
  Effect.runFork(Fiber.interrupt(fiber)).addObserver(() => {
    process.stdout.write(`TIMING ${JSON.stringify({ shutdownMs: Math.round(performance.now() - stopping) })}\n`)
    process.exit(0)
  })
})
fiber.addObserver((exit) => {
  if (Exit.isSuccess(exit)) return process.exit(0)
  if (Cause.hasInterruptsOnly(exit.cause)) return
  process.stderr.write(`worker failed: ${String(Cause.squash(exit.cause))}\n`)
  process.exit(1)
})
