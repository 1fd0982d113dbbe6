/**
 * A durable run that survives a crash, on the embedded engine (PGlite files, no server). The example
 * starts itself as a child worker, which runs an agent whose second tool call is slow; once the first
 * tool has run, the parent kills the worker with SIGKILL. A second worker on the same data directory
 * finishes the run: the model is not asked again for the turns already recorded, the readOnly tool that
 * was cut short runs again, and the mutating one that had finished does not.
 * Run: npm run example:durable
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { agent, text, tool, toolCalls } from "effect-agent-dsl"
import { durable } from "effect-agent-dsl/durable"
import { embeddedEngine } from "effect-agent-dsl/durable/embedded"
import { scriptedModel } from "effect-agent-dsl/testing"

const say = (line: string) => process.stdout.write(`${line}\n`)

/** The worker: one agent, one engine, one run. */
const worker = (dataDir: string) => {
  const log = (what: string) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`insert into example_log (pid, what) values (${process.pid}, ${what})`
    }).pipe(Effect.orDie)
  const book = tool("book_room", {
    description: "Book the hotel room (mutating: never run twice blindly)",
    args: Schema.Struct({ city: Schema.String }),
    run: ({ city }) => Effect.as(log(`booked a room in ${city}`), `room booked in ${city}`)
  })
  const weather = tool("weather", {
    description: "The forecast (readOnly: safe to run again)",
    args: Schema.Struct({ city: Schema.String }),
    effect: "readOnly",
    run: ({ city }) =>
      Effect.gen(function*() {
        yield* log(`asked the weather in ${city}`)
        writeFileSync(join(dataDir, "weather-started"), "") // tells the parent where we are
        yield* Effect.sleep("4 seconds")
        return `sunny in ${city}`
      })
  })
  const model = scriptedModel((request) => {
    const results = request.messages.filter((m) => m.role === "tool").map((m) => m.content)
    if (results.length === 0) return toolCalls([{ id: "c1", name: "book_room", arguments: { city: "Lisbon" } }])
    if (results.length === 1) return toolCalls([{ id: "c2", name: "weather", arguments: { city: "Lisbon" } }])
    return text(`Trip ready: ${results.join(", ")}.`)
  })
  const trip = durable(agent("trip-planner").model(model).tools({ book_room: book, weather }))
  const program = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`create table if not exists example_log (pid integer, what text, at timestamptz default now())`
    const result = yield* trip.run("Plan a trip to Lisbon", { runId: "trip-1" })
    say(`worker ${process.pid}: ${JSON.stringify(result)}`)
  })
  return Effect.runPromise(program.pipe(Effect.provide(trip.layer.pipe(Layer.provideMerge(embeddedEngine({ dataDir })))))).then(() => process.exit(0))
}

const startWorker = (dataDir: string) =>
  spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], { env: { ...process.env, DURABLE_EXAMPLE_WORKER: dataDir }, stdio: ["ignore", "inherit", "inherit"] })

const main = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "durable-example-"))
  try {
    const first = startWorker(dataDir)
    say(`worker ${first.pid} started on ${dataDir}`)
    // The weather tool takes 4 s: kill the worker once it has started it (after the booking).
    const started = join(dataDir, "weather-started")
    let exited = false
    first.once("exit", () => (exited = true))
    while (!existsSync(started) && !exited) await new Promise((r) => setTimeout(r, 100))
    if (exited) throw new Error("the worker ended before the weather tool started")
    rmSync(started)
    const gone = new Promise((r) => first.once("exit", r))
    first.kill("SIGKILL")
    await gone
    say(`worker ${first.pid} killed with SIGKILL in the middle of the run`)
    const second = startWorker(dataDir)
    say(`worker ${second.pid} started on the same directory`)
    const code = await new Promise<number | null>((r) => second.once("exit", r))
    const { PGlite } = await import("@electric-sql/pglite")
    const db = new PGlite(join(dataDir, "pg"))
    const rows = (await db.query<{ pid: number; what: string }>("select pid, what from example_log order by at")).rows
    await db.close()
    say("what the tools did (read from the database after both workers ended):")
    for (const row of rows) say(`  worker ${row.pid}: ${row.what}`)
    process.exitCode = code ?? 1
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.env.DURABLE_EXAMPLE_WORKER !== undefined) void worker(process.env.DURABLE_EXAMPLE_WORKER)
else void main()
