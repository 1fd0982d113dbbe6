/**
 * Suspended durable runs at rest, in one embedded store: `BENCH_SUSPENDED_RUNS` (default 10,000) runs
 * that each made one model call and wait for the approval of one tool call. Measures the bytes and rows
 * a suspended run leaves in the store (PostgreSQL's own sizes of each table with its indexes and
 * TOAST, and the data directory on disk), the time to suspend them, the time to open the store again
 * with all of them waiting, and the time to resume a sample of them (`decide` until the run's
 * completed result) spread over the whole store: min, median, p99, max. `suspendedFigures()` returns
 * them; alone: `tsx bench/durable-suspended.ts`.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, References, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { agent, Decision, text, tool, toolCalls } from "../src/index.ts"
import type { ModelRequest } from "../src/index.ts"
import { durable } from "../src/durable/index.ts"
import { embeddedEngine } from "../src/durable/embedded.ts"
import { scriptedModel } from "../src/testing/index.ts"

const runs = Number(process.env.BENCH_SUSPENDED_RUNS ?? 10_000)
const sample = Math.min(runs, Number(process.env.BENCH_SUSPENDED_SAMPLE ?? 200))
const concurrency = Number(process.env.BENCH_SUSPENDED_CONCURRENCY ?? 16)

/** One table's share of a suspended run. */
export interface TableAtRest {
  readonly table: string
  readonly rowsPerRun: number
  readonly bytesPerRun: number
}

/** The figures of the suspended runs. */
export interface SuspendedFigures {
  readonly runs: number
  readonly suspendMsPerRun: number
  /** pg_database_size after − before, per run. */
  readonly databaseBytesPerRun: number
  /** The data directory on disk (du) after − before, per run. */
  readonly diskBytesPerRun: number
  readonly tables: ReadonlyArray<TableAtRest>
  /** From opening the store again (all runs waiting) to the first resumed run's completion, ms. */
  readonly reopenMs: number
  /** `decide` → completed `result`, ms: min, median, p99, max over `sample` runs spread over the store. */
  readonly resumeMs: readonly [number, number, number, number]
  /** The process's CPU time over the same spans (what the resume costs, apart from waiting for a core and the polling of `result`). */
  readonly resumeCpuMs: readonly [number, number, number, number]
  readonly sample: number
}

const makeAgent = () => {
  const pay = tool("pay", {
    args: Schema.Struct({ amount: Schema.Finite }),
    effect: "idempotent",
    needsApproval: true,
    run: ({ amount }) => `paid ${amount}`
  })
  const model = scriptedModel((request: ModelRequest) =>
    request.messages.some((m) => m.role === "tool") ? text("done") : toolCalls([{ id: "p1", name: "pay", arguments: { amount: 10 } }])
  )
  // A day to decide (the default maxDuration, 5 minutes, would end the first runs before 10,000 are suspended).
  return agent("payer").model(model).tools({ pay }).budget({ maxTurns: 3, maxDuration: 24 * 60 * 60 * 1000 })
}

const diskBytes = (dir: string): number => Number(execFileSync("du", ["-sb", dir], { encoding: "utf8" }).split("\t")[0])

const tableSizes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ table: string; bytes: string }>`
    select c.relname as table, pg_total_relation_size(c.oid)::text as bytes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind = 'r'`
  const rows = new Map<string, { rows: number; bytes: number }>()
  for (const t of tables) {
    const [count] = yield* sql<{ n: string }>`select count(*)::text as n from ${sql(t.table)}`
    rows.set(t.table, { rows: Number(count!.n), bytes: Number(t.bytes) })
  }
  const [db] = yield* sql<{ bytes: string }>`select pg_database_size(current_database())::text as bytes`
  return { tables: rows, database: Number(db!.bytes) }
})

const quantile = (sorted: ReadonlyArray<number>, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

/** Suspends `runs` runs in a new embedded store, measures them at rest, reopens the store and resumes a sample. */
export const suspendedFigures = async (progress: (line: string) => void = () => {}): Promise<SuspendedFigures> => {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-suspended-"))
  const d = durable(makeAgent(), { name: "suspended" })
  const runner = () => d.layer.pipe(Layer.provideMerge(embeddedEngine({ dataDir })))
  const quiet = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect.pipe(Effect.provideService(References.MinimumLogLevel, "None")))
  try {
    const first = await quiet(Effect.gen(function*() {
      // one run first, so the tables exist before the "before" sizes
      yield* d.run("pay", { runId: "warm" })
      const before = yield* tableSizes
      const diskBefore = diskBytes(dataDir)
      const t0 = performance.now()
      let done = 0
      yield* Effect.forEach(Array.from({ length: runs }, (_, i) => i), (i) =>
        d.run("pay", { runId: `run-${i}` }).pipe(Effect.tap((r) => {
          if (r._tag !== "Suspended") return Effect.die(new Error(`run-${i} did not suspend: ${r._tag}`))
          if (++done % 1000 === 0) progress(`${done} runs suspended`)
          return Effect.void
        })), { concurrency, discard: true })
      const suspendMsPerRun = (performance.now() - t0) / runs
      const after = yield* tableSizes
      const tables: Array<TableAtRest> = []
      for (const [table, a] of after.tables) {
        const b = before.tables.get(table) ?? { rows: 0, bytes: 0 }
        if (a.rows === b.rows && a.bytes === b.bytes) continue
        tables.push({ table, rowsPerRun: (a.rows - b.rows) / runs, bytesPerRun: (a.bytes - b.bytes) / runs })
      }
      tables.sort((x, y) => y.bytesPerRun - x.bytesPerRun)
      return {
        suspendMsPerRun,
        databaseBytesPerRun: (after.database - before.database) / runs,
        diskBytesPerRun: (diskBytes(dataDir) - diskBefore) / runs,
        tables
      }
    }).pipe(Effect.provide(runner())))
    progress("store closed; reopening it and resuming a sample")
    const picks = Array.from({ length: sample }, (_, k) => Math.floor((k * runs) / sample))
    const opened = performance.now()
    const resumed = await quiet(Effect.gen(function*() {
      const times: Array<number> = []
      const cpu: Array<number> = []
      let reopenMs = 0
      for (const i of picks) {
        const runId = `run-${i}`
        const waiting = yield* d.result(runId)
        if (waiting._tag !== "Suspended") return yield* Effect.die(new Error(`${runId} is not waiting`))
        const t0 = performance.now()
        const c0 = process.cpuUsage()
        yield* d.decide(runId, { [waiting.pending[0]!.id]: Decision.approve })
        const result = yield* d.result(runId)
        if (result._tag !== "Completed" || result.output !== "done") return yield* Effect.die(new Error(`${runId} did not complete`))
        const took = performance.now() - t0
        const c = process.cpuUsage(c0)
        if (times.length === 0) reopenMs = performance.now() - opened
        times.push(took)
        cpu.push((c.user + c.system) / 1000)
      }
      return { times: times.sort((a, b) => a - b), cpu: cpu.sort((a, b) => a - b), reopenMs }
    }).pipe(Effect.provide(runner())))
    const t = resumed.times
    const c = resumed.cpu
    return {
      runs,
      ...first,
      reopenMs: resumed.reopenMs,
      resumeMs: [t[0]!, quantile(t, 0.5), quantile(t, 0.99), t.at(-1)!],
      resumeCpuMs: [c[0]!, quantile(c, 0.5), quantile(c, 0.99), c.at(-1)!],
      sample
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The figures as markdown. */
export const suspendedMarkdown = (f: SuspendedFigures): string => [
  `${f.runs.toLocaleString("en")} suspended runs in one embedded store; suspending cost ${f.suspendMsPerRun.toFixed(1)} ms a run.`,
  "",
  `| at rest, per suspended run | bytes | rows |`,
  `|---|---:|---:|`,
  `| database (pg_database_size) | ${Math.round(f.databaseBytesPerRun).toLocaleString("en")} | |`,
  `| data directory on disk (du) | ${Math.round(f.diskBytesPerRun).toLocaleString("en")} | |`,
  ...f.tables.map((t) => `| \`${t.table}\` (with indexes, TOAST) | ${Math.round(t.bytesPerRun).toLocaleString("en")} | ${t.rowsPerRun.toFixed(2)} |`),
  "",
  `Reopening the store (all runs waiting) to the first resumed run's completion: ${f.reopenMs.toFixed(0)} ms.`,
  `Resume (\`decide\` → completed result), ${f.sample} runs spread over the store: min ${f.resumeMs[0].toFixed(1)}, median ${f.resumeMs[1].toFixed(1)}, p99 ${f.resumeMs[2].toFixed(1)}, max ${f.resumeMs[3].toFixed(1)} ms wall; CPU min ${f.resumeCpuMs[0].toFixed(1)}, median ${f.resumeCpuMs[1].toFixed(1)}, p99 ${f.resumeCpuMs[2].toFixed(1)}, max ${f.resumeCpuMs[3].toFixed(1)} ms.`
].join("\n")

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").at(-1)!)
if (isMain) {
  suspendedFigures((line) => console.error(`[suspended] ${line}`)).then((f) => {
    console.log(suspendedMarkdown(f))
    process.exit(0)
  }, (e) => {
    console.error(e)
    process.exit(1)
  })
}
