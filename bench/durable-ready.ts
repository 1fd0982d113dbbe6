/**
 * A worker ready to take work on an existing embedded store: the crash tests' worker process
 * (test/durable-engines/worker.ts, `MODE=serve`, started with `node --import tsx`) on a store that holds
 * a finished run, `BENCH_READY_RUNS` starts (default 7). Per start: the process ready (node, tsx,
 * imports, engine: `process.uptime()` when the engine's layers are built), the engine's layers alone
 * (the PGlite files opened, the stores' and Effect Cluster's tables checked, the runner started), and,
 * in a separate `node` process, PGlite alone opening the same files (import, open, first query).
 * `readyFigures()` returns them; alone: `tsx bench/durable-ready.ts`.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runWorker, startWorker } from "../test/durable-engines/processes.ts"

const starts = Number(process.env.BENCH_READY_RUNS ?? 7)

/** min, median, max */
export type Spread = readonly [number, number, number]

/** Start-up figures, ms. */
export interface ReadyFigures {
  readonly processReadyMs: Spread
  readonly engineReadyMs: Spread
  readonly pgliteOpenMs: Spread
  readonly pgliteImportMs: Spread
  readonly loadAverage: number
}

const spread = (values: ReadonlyArray<number>): Spread => {
  const sorted = [...values].sort((a, b) => a - b)
  return [sorted[0]!, sorted[Math.floor(sorted.length / 2)]!, sorted.at(-1)!]
}

const pgliteAlone = (dir: string): { importMs: number; openMs: number } => {
  const script = `
    const t0 = performance.now()
    const { PGlite } = await import("@electric-sql/pglite")
    const t1 = performance.now()
    const db = new PGlite(${JSON.stringify(dir)})
    await db.waitReady
    await db.query("select 1")
    const t2 = performance.now()
    await db.close()
    console.log(JSON.stringify({ importMs: Math.round(t1 - t0), openMs: Math.round(t2 - t1) }))`
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", cwd: process.cwd() }).trim())
}

/** Starts the worker `starts` times on one existing store. */
export const readyFigures = async (progress: (line: string) => void = () => {}): Promise<ReadyFigures> => {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-ready-"))
  try {
    const base = { ENGINE: "embedded", DATA_DIR: dataDir }
    const first = await runWorker({ ...base, RUN_ID: "first" })
    if (first.code !== 0) throw new Error(`the first worker failed: ${first.stderr.slice(-2000)}`)
    const processReady: Array<number> = []
    const engineReady: Array<number> = []
    const open: Array<number> = []
    const imports: Array<number> = []
    for (let i = 0; i < starts; i++) {
      const w = startWorker({ ...base, MODE: "serve" })
      await w.ready
      processReady.push(w.timings.processReadyMs!)
      engineReady.push(w.timings.engineReadyMs!)
      w.stop()
      const ended = await w.exit
      if (ended.code !== 0) throw new Error(`worker ${i} stopped with ${ended.code}: ${ended.stderr.slice(-2000)}`)
      const alone = pgliteAlone(join(dataDir, "pg"))
      open.push(alone.openMs)
      imports.push(alone.importMs)
      progress(`start ${i + 1}/${starts}: process ready ${w.timings.processReadyMs} ms, engine ${w.timings.engineReadyMs} ms, PGlite alone ${alone.openMs} ms`)
    }
    const loadAverage = Number(execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).split(" ")[0])
    return { processReadyMs: spread(processReady), engineReadyMs: spread(engineReady), pgliteOpenMs: spread(open), pgliteImportMs: spread(imports), loadAverage }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const fmt = (s: Spread) => `${s[1]} (${s[0]}–${s[2]})`

/** The figures as markdown. */
export const readyMarkdown = (f: ReadyFigures): string => [
  `| start on an existing embedded store (load average ${f.loadAverage}) | ms, median (min–max) |`,
  "|---|---:|",
  `| worker process ready (node + tsx + imports + engine) | ${fmt(f.processReadyMs)} |`,
  `| engine's layers (PGlite opened, tables checked, runner up) | ${fmt(f.engineReadyMs)} |`,
  `| PGlite alone: open + first query (separate process) | ${fmt(f.pgliteOpenMs)} |`,
  `| PGlite alone: import | ${fmt(f.pgliteImportMs)} |`
].join("\n")

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").at(-1)!)
if (isMain) {
  readyFigures((line) => console.error(`[ready] ${line}`)).then((f) => {
    console.log(readyMarkdown(f))
    process.exit(0)
  }, (e) => {
    console.error(e)
    process.exit(1)
  })
}
