/**
 * Cost per step of durable runs against in-memory ones: the same agent (a readOnly tool call per turn,
 * `BENCH_DURABLE_TURNS` turns, then the answer) run plainly, on the in-memory workflow engine, on the
 * embedded engine (PGlite files) and, with DATABASE_URL, on a PostgreSQL runner (also with
 * `synchronous_commit=off`). A step is one model call or one tool execution (each an Activity when
 * durable). `durableFigures()` returns the figures; run alone: `tsx bench/durable.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Schema } from "effect"
import { agent, text, tool, toolCalls } from "../src/index.ts"
import type { ModelRequest } from "../src/index.ts"
import { durable, memoryEngine } from "../src/durable/index.ts"
import { embeddedEngine } from "../src/durable/embedded.ts"
import { postgresRunner } from "../src/durable/postgres.ts"
import { scriptedModel } from "../src/testing/index.ts"

const turns = Number(process.env.BENCH_DURABLE_TURNS ?? 5)
const runs = Number(process.env.BENCH_DURABLE_RUNS ?? 5)
const stepsPerRun = turns * 2 + 1

const makeAgent = () => {
  const look = tool("look", { args: Schema.Struct({ n: Schema.Finite }), effect: "readOnly", run: ({ n }) => n * 2 })
  const model = scriptedModel((request: ModelRequest) => {
    const seen = request.messages.filter((m) => m.role === "tool").length
    return seen < turns ? toolCalls([{ id: `c${seen}`, name: "look", arguments: { n: seen } }]) : text("done")
  })
  return agent("bench").model(model).tools({ look }).budget({ maxTurns: turns + 2 })
}

/** One engine's figure: ms per step, over `runs` sequential runs after one warm-up run. */
export interface DurableFigure {
  readonly engine: string
  readonly msPerStep: number
  readonly msPerRun: number
}

const timeDurable = (engine: string, layer: Layer.Layer<any, any>): Promise<DurableFigure> => {
  const d = durable(makeAgent(), { name: `bench-${engine}` })
  const program = Effect.gen(function*() {
    yield* d.run("go", { runId: `warm-${Date.now()}` })
    const t0 = performance.now()
    for (let i = 0; i < runs; i++) yield* d.run("go", { runId: `r${i}-${Date.now()}` })
    const ms = (performance.now() - t0) / runs
    return { engine, msPerRun: ms, msPerStep: ms / stepsPerRun }
  })
  return Effect.runPromise(program.pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(layer)))) as Effect.Effect<DurableFigure>)
}

/** The figures, engine by engine (PostgreSQL only with DATABASE_URL). */
export const durableFigures = async (): Promise<ReadonlyArray<DurableFigure>> => {
  const figures: Array<DurableFigure> = []
  const plain = makeAgent()
  await plain.run("go")
  const t0 = performance.now()
  for (let i = 0; i < runs * 20; i++) await plain.run("go")
  const plainMs = (performance.now() - t0) / (runs * 20)
  figures.push({ engine: "in-memory run (not durable)", msPerRun: plainMs, msPerStep: plainMs / stepsPerRun })
  figures.push(await timeDurable("memory workflow engine", memoryEngine))
  const dataDir = mkdtempSync(join(tmpdir(), "bench-durable-"))
  try {
    figures.push(await timeDurable("embedded (PGlite files)", embeddedEngine({ dataDir })))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  const url = process.env.DATABASE_URL
  if (url !== undefined) {
    const port = 36000 + Math.floor(Math.random() * 1000)
    figures.push(await timeDurable("PostgreSQL runner", postgresRunner({ url, runnerAddress: { host: "127.0.0.1", port } })))
    figures.push(await timeDurable("PostgreSQL runner, synchronous_commit=off", postgresRunner({
      url,
      runnerAddress: { host: "127.0.0.1", port: port + 1 },
      pool: { startupParameters: { synchronous_commit: "off" } }
    })))
  }
  return figures
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").at(-1)!)
if (isMain) {
  durableFigures().then((figures) => {
    console.log(`| engine | ms/run (${stepsPerRun} steps) | ms/step |\n|---|---|---|`)
    for (const f of figures) console.log(`| ${f.engine} | ${f.msPerRun.toFixed(1)} | ${f.msPerStep.toFixed(2)} |`)
    process.exit(0)
  }, (e) => {
    console.error(e)
    process.exit(1)
  })
}
