/**
 * Runs per second through two PostgreSQL runners: two runner processes (`MODE=serve`) of the crash
 * tests' worker (test/durable-engines/worker.ts: the shopping agent, 3 model calls and 3 tool calls a
 * run, two of them mutating with their intents claimed, each tool writing a row) on one PostgreSQL
 * (DATABASE_URL, else a throwaway cluster from the server binaries), and a client process that starts
 * `BENCH_THROUGHPUT_RUNS` runs at once and waits for all of them. Per round: the runs divided by the
 * time from the client being ready (its engine up; it starts the runs at once) to its exit, and how the
 * runs spread over the runners. `throughputFigures()` returns them; alone: `tsx bench/durable-throughput.ts`.
 */
import { postgresAvailable, startPostgres } from "../test/support/postgres.ts"
import { queryPostgres, startWorker } from "../test/durable-engines/processes.ts"

const runsPerRound = Number(process.env.BENCH_THROUGHPUT_RUNS ?? 100)
const rounds = Number(process.env.BENCH_THROUGHPUT_ROUNDS ?? 3)

/** The throughput figures: runs per second per round, and how many runs each runner finished. */
export interface ThroughputFigures {
  readonly runsPerRound: number
  readonly runsPerSecond: ReadonlyArray<number>
  readonly perRunner: ReadonlyArray<readonly [number, number]>
}

/** Undefined when no PostgreSQL is at hand. */
export const throughputFigures = async (progress: (line: string) => void = () => {}): Promise<ThroughputFigures | undefined> => {
  if (!postgresAvailable()) return undefined
  const pg = await startPostgres()
  const port = 43000 + Math.floor(Math.random() * 2000)
  const base = { ENGINE: "postgres", DATABASE_URL: pg.url }
  const one = startWorker({ ...base, RUNNER_PORT: String(port), MODE: "serve" })
  const two = startWorker({ ...base, RUNNER_PORT: String(port + 1), MODE: "serve" })
  try {
    await Promise.all([one.ready, two.ready])
    // both runners hold their shards before the clock starts
    await new Promise((r) => setTimeout(r, 3000))
    const runsPerSecond: Array<number> = []
    const perRunner: Array<readonly [number, number]> = []
    for (let round = 0; round < rounds; round++) {
      const ids = Array.from({ length: runsPerRound }, (_, i) => `tp-${round}-${i}`)
      const client = startWorker({ ...base, MODE: "start", RUN_IDS: ids.join(",") })
      // from the client's engine ready (it starts the runs right after) to its exit
      await client.ready
      const t0 = performance.now()
      const ended = await client.exit
      const seconds = (performance.now() - t0) / 1000
      const completed = ended.results.filter((r) => r.ok?._tag === "Completed").length
      if (ended.code !== 0 || completed !== runsPerRound) throw new Error(`round ${round}: ${completed}/${runsPerRound} completed\n${ended.stderr.slice(-2000)}`)
      runsPerSecond.push(runsPerRound / seconds)
      const answers = queryPostgres<{ pid: number; n: number }>(pg.url, `select pid, count(*)::int as n from executions where tool = 'answer' and order_id like 'tp-${round}-%' group by pid`)
      perRunner.push([answers.find((a) => a.pid === one.child.pid)?.n ?? 0, answers.find((a) => a.pid === two.child.pid)?.n ?? 0])
      progress(`round ${round + 1}/${rounds}: ${(runsPerRound / seconds).toFixed(1)} runs/s`)
    }
    return { runsPerRound, runsPerSecond, perRunner }
  } finally {
    one.stop()
    two.stop()
    await Promise.all([one.exit, two.exit])
    pg.stop()
  }
}

/** The figures as markdown. */
export const throughputMarkdown = (f: ThroughputFigures): string => {
  const sorted = [...f.runsPerSecond].sort((a, b) => a - b)
  return [
    `Two PostgreSQL runner processes, ${f.runsPerRound} runs started at once per round (6 steps each): ` +
    `**${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} runs/s** median (min ${sorted[0]!.toFixed(1)}, max ${sorted.at(-1)!.toFixed(1)}, ${sorted.length} rounds); ` +
    `runs finished per runner: ${f.perRunner.map(([a, b]) => `${a} + ${b}`).join(", ")}.`
  ].join("\n")
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").at(-1)!)
if (isMain) {
  throughputFigures((line) => console.error(`[throughput] ${line}`)).then((f) => {
    console.log(f === undefined ? "no PostgreSQL at hand (DATABASE_URL or server binaries)" : throughputMarkdown(f))
    process.exit(0)
  }, (e) => {
    console.error(e)
    process.exit(1)
  })
}
