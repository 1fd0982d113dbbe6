/** The PostgreSQL the durable and session tests rely on: CI's (DATABASE_URL) or one started here. */
import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, expect, it } from "vitest"
import { startPostgres, type TestPostgres } from "./postgres.ts"

let pg: TestPostgres
beforeAll(async () => {
  pg = await startPostgres()
}, 60_000)
afterAll(() => pg?.stop(), 60_000)

it("gives each caller its own database on 127.0.0.1", () => {
  expect(pg.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/test_/)
  expect(execFileSync("psql", [pg.url, "-Atc", "select current_database()"], { encoding: "utf8" }).trim()).toMatch(/^test_/)
})
