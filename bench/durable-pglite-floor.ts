/**
 * The floor under an embedded durable step: what PGlite itself costs for one call, measured the way
 * the engine calls it (one `execProtocol` message a statement, prepared by name, files on disk,
 * `full_page_writes=off`), on the engine's own tables: `select 1`; a one-row insert and its commit; the
 * step's statement (its recorded result and three journal events, `aws_activity_events`) and its two
 * halves alone. `pgliteFloorFigures()` returns them (ms a call, median (min–max) over rounds of
 * `BENCH_PGLITE_CALLS` calls, default 2,000); alone: `tsx bench/durable-pglite-floor.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const callsPerRound = Number(process.env.BENCH_PGLITE_CALLS ?? 2_000)
const rounds = 3

/** min, median, max */
export type Spread = readonly [number, number, number]

/** One kind of call and what it costs, ms. */
export interface FloorFigure {
  readonly call: string
  readonly wallMs: Spread
  readonly cpuMs: Spread
}

const spread = (values: ReadonlyArray<number>): Spread => {
  const sorted = [...values].sort((a, b) => a - b)
  return [sorted[0]!, sorted[Math.floor(sorted.length / 2)]!, sorted.at(-1)!]
}

// The engine's tables (pglite-workflow-store.ts, sql-store.ts), as they are created.
const tables = `
create table agent_workflow_executions (execution_id text primary key, workflow text not null, payload text not null, parent text,
  status text not null default 'running', wake integer not null default 0, interrupted boolean not null default false, result text,
  created_at timestamptz not null default now());
create table agent_workflow_steps (execution_id text not null, name text not null, value text not null, primary key (execution_id, name));
create table agent_run_events (run_id text not null, id bigint not null, key text not null, event jsonb not null,
  at timestamptz not null default now(), primary key (run_id, id), unique (run_id, key));`
const stepInsert = (execution: string, name: string, value: string) =>
  `insert into agent_workflow_steps (execution_id, name, value) select ${execution}, ${name}, ${value}
    where exists (select 1 from agent_workflow_executions where execution_id = ${execution}) on conflict (execution_id, name) do nothing`
const eventsInsert = `insert into agent_run_events (run_id, id, key, event)
    select $1, m.last + row_number() over (order by x.ord), x.key, x.event
    from (select coalesce(max(id), 0) as last from agent_run_events where run_id = $1) m,
      rows from (jsonb_to_recordset($2::jsonb) as (key text, event jsonb)) with ordinality as x(key, event, ord)
    where not exists (select 1 from agent_run_events e where e.run_id = $1 and e.key = x.key) on conflict (run_id, key) do nothing`

/** The floor's figures, each call kind measured in its own rounds on one new store. */
export const pgliteFloorFigures = async (): Promise<ReadonlyArray<FloorFigure>> => {
  const { PGlite, protocol } = await import("@electric-sql/pglite")
  const { serialize } = protocol
  const dir = mkdtempSync(join(tmpdir(), "bench-pglite-floor-"))
  const db = await PGlite.create({ dataDir: dir, relaxedDurability: true, startParams: [...PGlite.defaultStartParams, "-c", "full_page_writes=off"] })
  try {
    await db.exec(tables)
    const concat = (parts: ReadonlyArray<Uint8Array>) => {
      const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
      let at = 0
      for (const part of parts) {
        out.set(part, at)
        at += part.length
      }
      return out
    }
    const prepare = (name: string, text: string) => db.execProtocol(concat([serialize.parse({ name, text }), serialize.sync()]))
    const call = (name: string, values: Array<string>) =>
      db.execProtocolRaw(concat([serialize.bind({ statement: name, values }), serialize.describe({ type: "P" }), serialize.execute({}), serialize.sync()]))
    await prepare("one", "select 1")
    await prepare("row", "insert into agent_workflow_steps (execution_id, name, value) values ($1, $2, $3)")
    await prepare("step", stepInsert("$1", "$2", "$3"))
    await prepare("events", eventsInsert)
    await prepare("step_events", `with step as (${stepInsert("$3", "$4", "$5")}) ${eventsInsert}`)
    await prepare("execution", "insert into agent_workflow_executions (execution_id, workflow, payload) values ($1, 'bench', '{}')")
    const value = JSON.stringify({ _tag: "Complete", exit: { _tag: "Success", value: { _tag: "ToolCalls", calls: [{ id: "c0", name: "look", arguments: "{\"n\":0}" }] } } })
    const events = (run: string, i: number) =>
      JSON.stringify([0, 1, 2].map((j) => ({ key: `${run}/Event/#${i}.${j}`, event: { _tag: "ToolUse", agent: "bench", runId: run, tool: "look", args: { n: i }, result: "0", turn: i } })))
    let executions = 0
    // Each run of 11 steps gets a new execution, as a durable run does.
    const execution = async (i: number) => {
      if (i % 11 === 0) await call("execution", [`e${++executions}`])
      return `e${executions}`
    }
    const kinds: ReadonlyArray<readonly [string, (i: number) => Promise<unknown>]> = [
      ["`select 1`", () => call("one", [])],
      ["a one-row insert and its commit", async (i) => call("row", [`r${executions}-${i}`, `s${i}`, value])],
      ["the step's result alone (`aws_activity`)", async (i) => call("step", [await execution(i), `a:step/${i}`, value])],
      ["three journal events alone (`are_insert`)", async (i) => call("events", [`run-${await execution(i)}`, events(`run-${executions}`, i)])],
      ["the step's statement: its result and three journal events (`aws_activity_events`)", async (i) => {
        const id = await execution(i)
        return call("step_events", [`run-${id}`, events(`run-${id}`, i), id, `a:step/${i}`, value])
      }]
    ]
    const figures: Array<FloorFigure> = []
    for (const [label, run] of kinds) {
      const wall: Array<number> = []
      const cpu: Array<number> = []
      for (let round = 0; round <= rounds; round++) {
        const started = performance.now()
        const cpuStarted = process.cpuUsage()
        for (let i = 0; i < callsPerRound; i++) await run(round * callsPerRound + i)
        const used = process.cpuUsage(cpuStarted)
        // The first round warms up.
        if (round === 0) continue
        wall.push((performance.now() - started) / callsPerRound)
        cpu.push((used.user + used.system) / 1000 / callsPerRound)
      }
      figures.push({ call: label, wallMs: spread(wall), cpuMs: spread(cpu) })
    }
    return figures
  } finally {
    await db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const fmt = (s: Spread) => `${s[1].toFixed(3)} (${s[0].toFixed(3)}–${s[2].toFixed(3)})`

/** The figures as a markdown table. */
export const pgliteFloorMarkdown = (figures: ReadonlyArray<FloorFigure>): string =>
  ["| one call into PGlite | wall ms | CPU ms |", "|---|---:|---:|", ...figures.map((f) => `| ${f.call} | ${fmt(f.wallMs)} | ${fmt(f.cpuMs)} |`)].join("\n")

if (import.meta.url === `file://${process.argv[1]}`) console.log(pgliteFloorMarkdown(await pgliteFloorFigures()))
