/**
 * Cost per step of durable runs against in-memory ones: the same agent (a readOnly tool call per turn,
 * `BENCH_DURABLE_TURNS` turns, then the answer) run plainly, on Effect's in-memory workflow engine, on
 * the embedded engine (PGlite files), on the engine the embedded engine replaced in issue #37 (Effect
 * Cluster's on PGlite files, `cluster-embedded.ts`) and, with DATABASE_URL, on a PostgreSQL runner. A
 * step is one model call or one tool execution (each an Activity when durable). Engines interleaved
 * round by round (`interleavedRounds`): wall and CPU time per step, median (min–max) over the rounds.
 * `durableFigures()` returns the figures; run alone: `tsx bench/durable.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer, References, Schema, Scope } from "effect"
import { agent, text, tool, toolCalls } from "../src/index.ts"
import type { ModelRequest } from "../src/index.ts"
import { durable, memoryEngine } from "../src/durable/index.ts"
import { embeddedEngine } from "../src/durable/embedded.ts"
import { postgresRunner } from "../src/durable/postgres.ts"
import { scriptedModel } from "../src/testing/index.ts"
import { clusterOnPglite } from "./cluster-embedded.ts"
import { interleavedRounds, type Summary } from "./measure.ts"

const turns = Number(process.env.BENCH_DURABLE_TURNS ?? 5)
const rounds = Number(process.env.BENCH_DURABLE_ROUNDS ?? 5)
const roundMs = Number(process.env.BENCH_DURABLE_ROUND_MS ?? 1000)
const stepsPerRun = turns * 2 + 1

const makeAgent = () => {
  const look = tool("look", { args: Schema.Struct({ n: Schema.Finite }), effect: "readOnly", run: ({ n }) => n * 2 })
  const model = scriptedModel((request: ModelRequest) => {
    const seen = request.messages.filter((m) => m.role === "tool").length
    return seen < turns ? toolCalls([{ id: `c${seen}`, name: "look", arguments: { n: seen } }]) : text("done")
  })
  return agent("bench").model(model).tools({ look }).budget({ maxTurns: turns + 2 })
}

/** One engine's figure: wall and CPU µs per step, median (min–max) over the rounds. */
export interface DurableFigure {
  readonly engine: string
  readonly wallUsPerStep: Summary
  readonly cpuUsPerStep: Summary
}

const perStep = (s: Summary): Summary => ({ median: s.median / stepsPerRun, min: s.min / stepsPerRun, max: s.max / stepsPerRun })

/** The figures, engine by engine (PostgreSQL only with DATABASE_URL). */
export const durableFigures = async (): Promise<ReadonlyArray<DurableFigure>> => {
  const scope = Effect.runSync(Scope.make())
  const dirs: Array<string> = []
  const dir = (name: string) => {
    const d = mkdtempSync(join(tmpdir(), `bench-durable-${name}-`))
    dirs.push(d)
    return d
  }
  try {
    const engines: Array<readonly [string, Layer.Layer<any, any>]> = [
      ["memory workflow engine (Effect's, nothing stored)", memoryEngine],
      ["embedded (PGlite files)", embeddedEngine({ dataDir: dir("embedded") })],
      ["before #37: Effect Cluster's engine on PGlite files", clusterOnPglite(dir("cluster"))]
    ]
    const url = process.env.DATABASE_URL
    if (url !== undefined) {
      const port = 36000 + Math.floor(Math.random() * 1000)
      engines.push(["PostgreSQL runner", postgresRunner({ url, runnerAddress: { host: "127.0.0.1", port } })])
    }
    const plain = makeAgent()
    const subjects: Array<{ readonly engine: string; readonly runOnce: () => Promise<unknown> }> = [{ engine: "in-memory run (not durable)", runOnce: () => plain.run("go") }]
    let n = 0
    for (const [engine, layer] of engines) {
      const d = durable(makeAgent(), { name: `bench-${subjects.length}` })
      const context = await Effect.runPromise(Layer.buildWithScope(d.layer.pipe(Layer.provideMerge(layer)), scope) as Effect.Effect<any>)
      const runOnce = () => Effect.runPromise(d.run("go", { runId: `r${n++}` }).pipe(Effect.provide(context), Effect.provideService(References.MinimumLogLevel, "None")) as Effect.Effect<unknown>)
      await runOnce()
      subjects.push({ engine, runOnce })
    }
    const timed = await interleavedRounds(subjects.map((s) => s.runOnce), { rounds, roundMs, settleMs: 100 })
    return timed.map((t, i) => ({ engine: subjects[i]!.engine, wallUsPerStep: perStep(t.wallUs), cpuUsPerStep: perStep(t.cpuUs) }))
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  }
}

const show = (s: Summary) => `${(s.median / 1000).toFixed(2)} (${(s.min / 1000).toFixed(2)}–${(s.max / 1000).toFixed(2)})`

/** The figures as rows of a table: ms per step. */
export const durableRows = (figures: ReadonlyArray<DurableFigure>) =>
  figures.map((f) => ({ engine: f.engine, "wall ms/step": show(f.wallUsPerStep), "CPU ms/step": show(f.cpuUsPerStep) }))

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").at(-1)!)
if (isMain) {
  durableFigures().then((figures) => {
    console.log(`Durable runs (${stepsPerRun} steps a run): median (min–max) of ${rounds} interleaved rounds of ${roundMs} ms`)
    console.table(durableRows(figures))
    process.exit(0)
  }, (e) => {
    console.error(e)
    process.exit(1)
  })
}
