/**
 * Two PostgreSQL runner processes starting at the same moment on a new database (every table created
 * by both at once): both come up and serve, trial after trial. Before the store's migrations took an
 * advisory lock, `create table if not exists` raced in PostgreSQL (a unique violation on its
 * catalogue) and one runner exited with `EngineUnavailable` on every trial. Needs PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postgresAvailable, startPostgres, type TestPostgres } from "../support/postgres.ts"
import { execPostgres, runWorker, startWorker, type Worker } from "./processes.ts"

const hasPostgres = postgresAvailable()
const long = process.env.DURABLE_LONG === "1"
let pg: TestPostgres
let port = 24500 + Math.floor(Math.random() * 1500)

describe.skipIf(!hasPostgres)("postgres runners starting together on a new database", () => {
  beforeAll(async () => {
    pg = await startPostgres()
  }, 120_000)
  afterAll(() => pg?.stop(), 60_000)

  it("both start, every trial (one in npm test, three in test:durable), and serve a run", async () => {
    for (let trial = 0; trial < (long ? 3 : 1); trial++) {
      const db = `together_${trial}_${process.pid}`
      execPostgres(pg.url, `create database ${db}`)
      const url = pg.url.replace(/\/[^/]*$/, `/${db}`)
      const runners: Array<Worker> = [0, 1].map(() => startWorker({ ENGINE: "postgres", DATABASE_URL: url, RUNNER_PORT: String(port++), MODE: "serve" }))
      try {
        const outcomes = await Promise.all(runners.map((r) => Promise.race([r.ready.then(() => "ready"), r.exit.then((e) => `exited: ${e.stderr}`)])))
        expect(outcomes, `trial ${trial}`).toEqual(["ready", "ready"])
        await new Promise((r) => setTimeout(r, 1000))
        expect(runners.map((r) => r.child.exitCode), `trial ${trial}: both still up`).toEqual([null, null])
        const client = await runWorker({ ENGINE: "postgres", DATABASE_URL: url, MODE: "start", RUN_IDS: `together-${trial}` })
        expect(client.code, client.stderr).toBe(0)
        expect(client.results[0].ok._tag).toBe("Completed")
      } finally {
        for (const r of runners) r.kill()
        await Promise.all(runners.map((r) => r.exit))
      }
    }
  }, 240_000)
})
