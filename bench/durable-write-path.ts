/**
 * Where a durable step's time goes: the agent of `bench/durable.ts` (a `readOnly` tool call per turn,
 * then the answer: 11 steps a run) on the embedded engine (PGlite files) and on a PostgreSQL runner
 * (loopback), rounds of sequential runs. Per step: wall and CPU time, the SQL statements (on PGlite
 * counted where they enter the backend, a pipeline's several in one call; on PostgreSQL at the
 * `SqlClient`; grouped by prepared name or text with literals folded), the calls into PGlite,
 * transactions, and the time the statements took. `writePathFigures()` returns them; alone: `tsx bench/durable-write-path.ts`.
 * PostgreSQL: DATABASE_URL, else a throwaway cluster from the server binaries (test/support/postgres.ts);
 * `BENCH_DURABLE_POSTGRES=0` leaves it out.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, References, Schema } from "effect"
import * as Statement from "effect/sql/Statement"
import { agent, text, tool, toolCalls } from "../src/index.ts"
import type { ModelRequest } from "../src/index.ts"
import { durable } from "../src/durable/index.ts"
import { embeddedEngine } from "../src/durable/embedded.ts"
import { postgresRunner } from "../src/durable/postgres.ts"
import { scriptedModel } from "../src/testing/index.ts"
import { postgresAvailable, startPostgres } from "../test/support/postgres.ts"
import { clusterOnPglite } from "./cluster-embedded.ts"

const turns = 5
const stepsPerRun = turns * 2 + 1
const rounds = Number(process.env.BENCH_DURABLE_ROUNDS ?? 5)
const runsPerRound = Number(process.env.BENCH_DURABLE_RUNS ?? 3)

/** min, median, max */
export type Spread = readonly [number, number, number]

/** One statement text's share of a step. */
export interface StatementShare {
  readonly text: string
  readonly perStep: number
  /** Time inside PGlite (embedded only; NaN elsewhere). */
  readonly msPerStep: number
}

/** One engine's write path. */
export interface WritePathFigure {
  readonly engine: string
  readonly wallMsPerStep: Spread
  readonly cpuMsPerStep: Spread
  readonly statementsPerStep: number
  /** Embedded only: calls into PGlite (a statement is one; a new statement text's description one more), explicit transactions, time inside PGlite. */
  readonly pglite?: { readonly roundTripsPerStep: number; readonly transactionsPerStep: number; readonly msInPglitePerStep: number }
  readonly statements: ReadonlyArray<StatementShare>
}

const spread = (values: ReadonlyArray<number>): Spread => {
  const sorted = [...values].sort((a, b) => a - b)
  return [sorted[0]!, sorted[Math.floor(sorted.length / 2)]!, sorted.at(-1)!]
}

/** A statement's text with its literals folded, so one statement is one row. */
export const foldLiterals = (sql: string): string =>
  sql.replace(/\s+/g, " ").trim()
    .replace(/'[a-z]+:\d+'(\s*,\s*'[a-z]+:\d+')*/g, "<shards>")
    .replace(/\b\d{6,}\b(\s*,\s*\d{6,})*/g, "<ids>")
    .replace(/([<>=]=?)\s*\d+/g, "$1 <n>")

const makeAgent = () => {
  const look = tool("look", { args: Schema.Struct({ n: Schema.Finite }), effect: "readOnly", run: ({ n }) => n * 2 })
  const model = scriptedModel((request: ModelRequest) => {
    const seen = request.messages.filter((m) => m.role === "tool").length
    return seen < turns ? toolCalls([{ id: `c${seen}`, name: "look", arguments: { n: seen } }]) : text("done")
  })
  return agent("bench").model(model).tools({ look }).budget({ maxTurns: turns + 2 })
}

/**
 * Calls into PGlite (each one synchronous call into the WASM backend: PostgreSQL's own work, no
 * awaiting in it), the statements they carried (a Bind message each: a pipeline carries several), the
 * BEGINs, and the time inside PGlite by statement (its prepared name, else its text).
 */
const pgliteCalls = { on: false, calls: 0, statements: 0, begins: 0, ms: 0, byText: new Map<string, number>(), countByText: new Map<string, number>() }
const decoder = new TextDecoder()
/** The statements of one protocol message: each Bind's statement name, or the text of the unnamed Parse before it. */
const statementsOf = (message: Uint8Array): Array<string> => {
  const found: Array<string> = []
  const named = new Map<string, string>()
  let unnamed = ""
  let i = 0
  while (i + 5 <= message.length) {
    const type = message[i]!
    const length = ((message[i + 1]! << 24) | (message[i + 2]! << 16) | (message[i + 3]! << 8) | message[i + 4]!) >>> 0
    if (type === 0x50) {
      // Parse: name, NUL, text, NUL
      const nameEnd = message.indexOf(0, i + 5)
      const name = decoder.decode(message.subarray(i + 5, nameEnd))
      const text = decoder.decode(message.subarray(nameEnd + 1, message.indexOf(0, nameEnd + 1)))
      if (name === "") unnamed = text
      else named.set(name, text)
    } else if (type === 0x42) {
      // Bind: portal, NUL, statement name, NUL, …
      const portalEnd = message.indexOf(0, i + 5)
      const name = decoder.decode(message.subarray(portalEnd + 1, message.indexOf(0, portalEnd + 1)))
      found.push(name === "" ? foldLiterals(unnamed) : `${name}: ${foldLiterals(named.get(name) ?? knownTexts.get(name) ?? "")}`)
    } else if (type === 0x51) {
      // a simple query
      found.push(foldLiterals(decoder.decode(message.subarray(i + 5, i + length))))
    }
    if (type === 0x50) {
      const nameEnd = message.indexOf(0, i + 5)
      const name = decoder.decode(message.subarray(i + 5, nameEnd))
      if (name !== "") knownTexts.set(name, decoder.decode(message.subarray(nameEnd + 1, message.indexOf(0, nameEnd + 1))))
    }
    i += 1 + length
  }
  return found
}
/** The texts of statements prepared under a name, as first parsed. */
const knownTexts = new Map<string, string>()
const watchPglite = async () => {
  const { PGlite } = await import("@electric-sql/pglite")
  const proto = PGlite.prototype as unknown as { execProtocolRawSync: (message: Uint8Array) => Uint8Array; watched?: boolean }
  if (proto.watched === true) return
  proto.watched = true
  const original = proto.execProtocolRawSync
  proto.execProtocolRawSync = function(this: unknown, message: Uint8Array) {
    const t0 = performance.now()
    try {
      return original.call(this, message)
    } finally {
      const statements = statementsOf(message)
      if (pgliteCalls.on && statements.length > 0) {
        const ms = performance.now() - t0
        pgliteCalls.calls++
        pgliteCalls.statements += statements.length
        pgliteCalls.ms += ms
        for (const text of statements) {
          if (text === "BEGIN") pgliteCalls.begins++
          pgliteCalls.byText.set(text, (pgliteCalls.byText.get(text) ?? 0) + ms / statements.length)
          pgliteCalls.countByText.set(text, (pgliteCalls.countByText.get(text) ?? 0) + 1)
        }
      }
    }
  }
}

const measure = async (engine: string, layer: Layer.Layer<any, any>): Promise<WritePathFigure> => {
  await watchPglite()
  let recording = false
  const byText = new Map<string, number>()
  // Every statement of every fiber (Effect Cluster's storage included) passes here, counted by text.
  const countStatements: Statement.Transformer = (statement) => {
    if (recording) {
      const text = foldLiterals(statement.compile()[0])
      byText.set(text, (byText.get(text) ?? 0) + 1)
    }
    return Effect.succeed(statement)
  }
  const d = durable(makeAgent(), { name: `write-path-${engine.split(" ")[0]}` })
  const program = Effect.gen(function*() {
    const tag = Date.now().toString(36)
    yield* d.run("go", { runId: `warm-${tag}` })
    const wall: Array<number> = []
    const cpu: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      recording = pgliteCalls.on = true
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      for (let i = 0; i < runsPerRound; i++) yield* d.run("go", { runId: `r${round}-${i}-${tag}` })
      const steps = runsPerRound * stepsPerRun
      wall.push((performance.now() - t0) / steps)
      const c = process.cpuUsage(c0)
      cpu.push((c.user + c.system) / 1000 / steps)
      recording = pgliteCalls.on = false
    }
    const steps = rounds * runsPerRound * stepsPerRun
    // On PGlite every statement is seen where it enters the backend (the engine's own pipelines
    // bypass the SqlClient); elsewhere, at the SqlClient.
    const counted = pgliteCalls.calls > 0 ? pgliteCalls.countByText : byText
    let total = 0
    for (const n of counted.values()) total += n
    const statements = [...counted].map(([text, n]) => ({ text, perStep: n / steps, msPerStep: (pgliteCalls.byText.get(text) ?? Number.NaN) / steps }))
      .sort((a, b) => (b.msPerStep || 0) - (a.msPerStep || 0) || b.perStep - a.perStep)
    const pglite = pgliteCalls.calls > 0
      ? { roundTripsPerStep: pgliteCalls.calls / steps, transactionsPerStep: pgliteCalls.begins / steps, msInPglitePerStep: pgliteCalls.ms / steps }
      : undefined
    Object.assign(pgliteCalls, { calls: 0, statements: 0, begins: 0, ms: 0, byText: new Map(), countByText: new Map() })
    return {
      engine,
      wallMsPerStep: spread(wall),
      cpuMsPerStep: spread(cpu),
      statementsPerStep: total / steps,
      ...(pglite === undefined ? {} : { pglite }),
      statements
    } satisfies WritePathFigure
  })
  return Effect.runPromise(
    program.pipe(
      Effect.provide(d.layer.pipe(Layer.provideMerge(layer))),
      Effect.provideService(Statement.CurrentTransformer, countStatements),
      Effect.provideService(References.MinimumLogLevel, "None")
    ) as unknown as Effect.Effect<WritePathFigure>
  )
}

/** The write path of the embedded engine and, when a PostgreSQL is at hand, of a PostgreSQL runner. */
export const writePathFigures = async (): Promise<ReadonlyArray<WritePathFigure>> => {
  const figures: Array<WritePathFigure> = []
  const dataDir = mkdtempSync(join(tmpdir(), "bench-write-path-"))
  try {
    figures.push(await measure("embedded (PGlite files)", embeddedEngine({ dataDir })))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  // The engine it replaced, for the same step side by side (bench/cluster-embedded.ts).
  const clusterDir = mkdtempSync(join(tmpdir(), "bench-write-path-cluster-"))
  try {
    figures.push(await measure("before #37: Effect Cluster's engine on PGlite files", clusterOnPglite(clusterDir)))
  } finally {
    rmSync(clusterDir, { recursive: true, force: true })
  }
  if (process.env.BENCH_DURABLE_POSTGRES !== "0" && postgresAvailable()) {
    const pg = await startPostgres()
    try {
      const port = 37000 + Math.floor(Math.random() * 1000)
      figures.push(await measure("PostgreSQL runner (loopback)", postgresRunner({ url: pg.url, runnerAddress: { host: "127.0.0.1", port } })))
    } finally {
      pg.stop()
    }
  }
  return figures
}

const fmt = (s: Spread, digits = 2) => `${s[1].toFixed(digits)} (${s[0].toFixed(digits)}–${s[2].toFixed(digits)})`

/** The figures as markdown: one table of engines, then each engine's statements. */
export const writePathMarkdown = (figures: ReadonlyArray<WritePathFigure>): string => {
  const lines = [
    "| engine | wall ms/step | CPU ms/step (process) | statements/step | PGlite: calls, BEGINs, ms inside, per step |",
    "|---|---:|---:|---:|---|"
  ]
  for (const f of figures) {
    lines.push(`| ${f.engine} | ${fmt(f.wallMsPerStep)} | ${fmt(f.cpuMsPerStep)} | ${f.statementsPerStep.toFixed(1)} | ${f.pglite === undefined ? "" : `${f.pglite.roundTripsPerStep.toFixed(1)}, ${f.pglite.transactionsPerStep.toFixed(2)}, ${f.pglite.msInPglitePerStep.toFixed(2)}`} |`)
  }
  for (const f of figures) {
    lines.push("", `${f.engine}, statements per step:`, "", "| per step | ms in PGlite/step | statement |", "|---:|---:|---|")
    for (const s of f.statements) lines.push(`| ${s.perStep.toFixed(2)} | ${Number.isNaN(s.msPerStep) ? "" : s.msPerStep.toFixed(3)} | \`${s.text.slice(0, 120)}\` |`)
  }
  return lines.join("\n")
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").at(-1)!)
if (isMain) {
  writePathFigures().then((figures) => {
    console.log(`${rounds} rounds of ${runsPerRound} runs (${stepsPerRun} steps each); median (min–max)\n`)
    console.log(writePathMarkdown(figures))
    process.exit(0)
  }, (e) => {
    console.error(e)
    process.exit(1)
  })
}

