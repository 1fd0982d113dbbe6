/**
 * Time figures of the engines, measured on real processes: a worker's engine ready on an existing
 * store; a graceful stop (SIGTERM) with a run in flight, and the run finished by the next start; on
 * PostgreSQL, the time from a runner's SIGKILL to its run going on on the other runner. Measurements,
 * so only in `npm run test:durable`, which prints the figures the README gives (generous bounds checked).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { postgresAvailable, startPostgres, type TestPostgres } from "../support/postgres.ts"
import { queryPostgres, runWorker, startWorker, until } from "./processes.ts"

const long = process.env.DURABLE_LONG === "1"
const dataDir = mkdtempSync(join(tmpdir(), "durable-timings-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
const report = (what: string, values: ReadonlyArray<number>) => {
  if (long) console.log(`${what}: ${values.join(", ")} ms (median ${[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]})`)
}

describe.skipIf(!long)("embedded engine: ready, graceful stop (test:durable)", () => {
  it("on an existing store the engine is ready in about a second; SIGTERM with a run in flight stops in about a second; the next start finishes the run", async () => {
    const base = { ENGINE: "embedded", DATA_DIR: dataDir }
    const warm = await runWorker({ ...base, RUN_ID: "warm" })
    expect(warm.code, warm.stderr).toBe(0)
    const ready: Array<number> = []
    const processReady: Array<number> = []
    const stops: Array<number> = []
    for (let i = 0; i < (long ? 5 : 1); i++) {
      const runId = `stop-${i}`
      const w = startWorker({ ...base, RUN_ID: runId, SLOW_TOOLS_MS: "3000" })
      await w.ready
      await new Promise((r) => setTimeout(r, 800)) // inside a tool
      const t = Date.now()
      w.stop()
      const ended = await w.exit
      stops.push(Date.now() - t)
      expect(ended.code, ended.stderr).toBe(0)
      ready.push(w.timings.engineReadyMs!)
      processReady.push(w.timings.processReadyMs!)
      const resumed = await runWorker({ ...base, RUN_ID: runId })
      expect(resumed.results[0].ok._tag, resumed.stderr).toBe("Completed")
    }
    report("embedded engine ready (existing store)", ready)
    report("embedded worker process ready (node + tsx + imports + engine)", processReady)
    report("embedded graceful stop, run in flight", stops)
    // Bounds with room for a loaded 2-core machine; the README gives the measured figures.
    expect(Math.min(...ready)).toBeLessThan(2500)
    expect(Math.min(...stops)).toBeLessThan(2500)
  }, 180_000)
})

const hasPostgres = postgresAvailable()

describe.skipIf(!hasPostgres || !long)("postgres runners: a killed runner's run picked up (test:durable)", () => {
  let pg: TestPostgres
  afterAll(() => pg?.stop(), 60_000)
  it("goes on on the other runner within seconds of the SIGKILL", async () => {
    pg = await startPostgres()
    let port = 27500 + Math.floor(Math.random() * 1500)
    const base = { ENGINE: "postgres", DATABASE_URL: pg.url }
    const pickups: Array<number> = []
    for (let trial = 0; trial < 3; trial++) {
      const one = startWorker({ ...base, RUNNER_PORT: String(port++), MODE: "serve", SLOW_TOOLS_MS: "1000" })
      const two = startWorker({ ...base, RUNNER_PORT: String(port++), MODE: "serve", SLOW_TOOLS_MS: "1000" })
      try {
        await Promise.all([one.ready, two.ready])
        await new Promise((r) => setTimeout(r, 3000))
        const ids = Array.from({ length: 6 }, (_, i) => `pick-${trial}-${i}`)
        const client = startWorker({ ...base, MODE: "start", RUN_IDS: ids.join(",") })
        const rows = () => queryPostgres<{ order_id: string; pid: number; ms: number }>(pg.url, `select order_id, pid, (extract(epoch from at) * 1000)::float8 as ms from executions where order_id like 'pick-${trial}-%'`)
        await until(() => rows().some((r) => r.pid === one.child.pid), 60_000, "a run on runner one")
        const mine = new Set(rows().filter((r) => r.pid === one.child.pid).map((r) => r.order_id))
        const killedAt = Date.now()
        one.kill()
        await until(() => rows().some((r) => mine.has(r.order_id) && r.pid === two.child.pid && r.ms > killedAt), 90_000, "runner two to go on with runner one's run")
        pickups.push(Math.round(Math.min(...rows().filter((r) => mine.has(r.order_id) && r.pid === two.child.pid && r.ms > killedAt).map((r) => r.ms)) - killedAt))
        const ended = await client.exit
        expect(ended.code, ended.stderr).toBe(0)
      } finally {
        one.kill()
        two.kill()
      }
    }
    report("postgres: SIGKILL to the run going on on the other runner", pickups)
    expect(Math.max(...pickups)).toBeLessThan(20_000)
  }, 400_000)
})
