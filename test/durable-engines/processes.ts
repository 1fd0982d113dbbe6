/**
 * The crash-test harness: worker processes (`worker.ts`, started with `node --import tsx`, killed with
 * SIGKILL) and the rows their tools wrote, read from outside the workers.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const workerPath = fileURLToPath(new URL("./worker.ts", import.meta.url))

/** A started worker: its `RESULT` lines, readiness, exit, and a SIGKILL. */
export interface Worker {
  readonly child: ChildProcess
  readonly ready: Promise<void>
  readonly exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly results: ReadonlyArray<any>; readonly stderr: string }>
  readonly results: Array<any>
  /** `TIMING` lines: `engineReadyMs`, `processReadyMs`, `shutdownMs`. */
  readonly timings: Record<string, number>
  readonly kill: () => void
  /** SIGTERM: a graceful shutdown. */
  readonly stop: () => void
}

/** Starts a worker with `env` added to this process's environment. */
export const startWorker = (env: Record<string, string>): Worker => {
  const child = spawn(process.execPath, ["--import", "tsx", workerPath], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const results: Array<any> = []
  const timings: Record<string, number> = {}
  let stderr = ""
  let buffer = ""
  let markReady = () => {}
  const ready = new Promise<void>((resolve) => (markReady = resolve))
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString()
    let nl: number
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      if (line === "READY") markReady()
      if (line.startsWith("RESULT ")) results.push(JSON.parse(line.slice(7)))
      if (line.startsWith("TIMING ")) Object.assign(timings, JSON.parse(line.slice(7)))
    }
  })
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; results: ReadonlyArray<any>; stderr: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, results, stderr }))
  )
  return { child, ready, exit, results, timings, kill: () => void child.kill("SIGKILL"), stop: () => void child.kill("SIGTERM") }
}

/** Runs a worker to its end. */
export const runWorker = (env: Record<string, string>) => startWorker(env).exit

/** Waits until `check` holds (polling), or fails after `ms`. */
export const until = async (check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** Rows of a query on the PGlite files of an embedded engine (no worker may be running). */
export const queryEmbedded = async <A>(dataDir: string, sql: string): Promise<ReadonlyArray<A>> => {
  const { PGlite } = await import("@electric-sql/pglite")
  const pg = new PGlite(`${dataDir}/pg`)
  try {
    return (await pg.query<A>(sql)).rows
  } finally {
    await pg.close()
  }
}

/** Rows of a query on PostgreSQL, through psql (JSON per row). */
export const queryPostgres = <A>(url: string, sql: string): ReadonlyArray<A> => {
  const out = execFileSync("psql", [url, "-Atqc", `select coalesce(json_agg(t), '[]') from (${sql}) t`], { encoding: "utf8" })
  return JSON.parse(out.trim() || "[]") as ReadonlyArray<A>
}

/** Runs a statement on PostgreSQL, through psql. */
export const execPostgres = (url: string, sql: string): void => {
  execFileSync("psql", [url, "-Atqc", sql], { encoding: "utf8" })
}

/** Every point where a worker can be killed in the shopper run (`worker.ts`). */
export const killPoints = [
  "before-model-1",
  "after-model-1",
  "in-tool-lookup",
  "after-tool-lookup",
  "in-tool-reserve",
  "after-tool-reserve",
  "before-model-2",
  "after-model-2",
  "in-tool-pay",
  "after-finish-c3",
  "after-model-3"
] as const

/** What every tool ran, per tool, for the run (order) `runId`. */
export const executionCounts = (rows: ReadonlyArray<{ readonly tool: string; readonly n: number | string; readonly keys: number | string }>) =>
  Object.fromEntries(rows.map((r) => [r.tool, { runs: Number(r.n), keys: Number(r.keys) }]))

export const countsSql = (runId: string) =>
  `select tool, count(*) as n, count(distinct idem_key) as keys from executions where order_id = '${runId}' group by tool order by tool`
