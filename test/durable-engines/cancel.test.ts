/**
 * `cancel` across real processes. Embedded: the worker is killed with SIGKILL inside a tool, a
 * client-only process cancels the run, and the restarted worker ends it with `Cancelled` (the later
 * tools never run). PostgreSQL: a client-only process cancels a run a runner is inside a slow tool of,
 * and the run ends `Cancelled` within about a second, the later tools never running.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { postgresAvailable, startPostgres, type TestPostgres } from "../support/postgres.ts"
import { countsSql, executionCounts, queryEmbedded, queryPostgres, runWorker, startWorker, until } from "./processes.ts"

const dataDir = mkdtempSync(join(tmpdir(), "durable-cancel-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const long = process.env.DURABLE_LONG === "1"

describe.skipIf(!long)("cancel, embedded engine (test:durable)", () => {
  it("cancelled while its worker was down (killed inside a tool): the restarted worker ends the run with Cancelled", async () => {
    const base = { ENGINE: "embedded", DATA_DIR: dataDir }
    const killed = await runWorker({ ...base, RUN_ID: "c-1", KILL_AT: "in-tool-reserve" })
    expect(killed.signal, killed.stderr).toBe("SIGKILL")
    const cancelled = await runWorker({ ...base, MODE: "cancel", CLIENT_ONLY: "1", RUN_ID: "c-1" })
    expect(cancelled.results[0], cancelled.stderr).toEqual({ cancelled: "c-1" })
    const resumed = await runWorker({ ...base, RUN_ID: "c-1" })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.results[0]).toMatchObject({ error: "Cancelled", detail: { runId: "c-1", reason: "cancelled by the test" } })
    const counts = executionCounts(await queryEmbedded(dataDir, countsSql("c-1")))
    expect(counts.pay).toBeUndefined()
  }, 120_000)
})

const hasPostgres = postgresAvailable()

describe.skipIf(!hasPostgres)("cancel, postgres runner", () => {
  let pg: TestPostgres
  afterAll(() => pg?.stop(), 60_000)
  it("a client-only process cancels a run a runner is inside a tool of: it ends Cancelled within about a second", async () => {
    pg = await startPostgres()
    const base = { ENGINE: "postgres", DATABASE_URL: pg.url }
    const runner = startWorker({ ...base, RUNNER_PORT: String(26000 + Math.floor(Math.random() * 1500)), MODE: "serve", SLOW_TOOLS_MS: "30000" })
    try {
      await runner.ready
      const client = startWorker({ ...base, MODE: "start", RUN_IDS: "pc-1" })
      await until(() => queryPostgres(pg.url, `select 1 from executions where order_id = 'pc-1'`).length > 0, 60_000, "the run inside its first tool")
      const cancelled = await runWorker({ ...base, MODE: "cancel", RUN_ID: "pc-1" })
      expect(cancelled.results[0], cancelled.stderr).toEqual({ cancelled: "pc-1" })
      // From the cancellation recorded (not from the cancelling process's start, seconds on a busy machine).
      const t = Date.now()
      const ended = await client.exit
      expect(ended.results[0]).toMatchObject({ error: "Cancelled", detail: { runId: "pc-1" } })
      expect(Date.now() - t).toBeLessThan(10_000) // the tool alone would take 30 s
      expect(executionCounts(queryPostgres(pg.url, countsSql("pc-1"))).pay).toBeUndefined()
    } finally {
      runner.kill()
    }
  }, 120_000)
})
