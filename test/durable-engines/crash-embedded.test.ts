/**
 * Real crashes on the embedded engine: a worker process killed with SIGKILL at a point of a run,
 * restarted on the same data directory, finishes the run with the transcript of an uncrashed run;
 * tool executions are counted from the database the tools wrote to, after the workers are dead.
 * `npm test` kills at one random point; `npm run test:durable` at every point.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countsSql, executionCounts, killPoints, queryEmbedded, runWorker, startWorker, until } from "./processes.ts"

const long = process.env.DURABLE_LONG === "1"
const dataDir = mkdtempSync(join(tmpdir(), "durable-embedded-"))
const base = { ENGINE: "embedded", DATA_DIR: dataDir }
let reference = ""

beforeAll(async () => {
  const ran = await runWorker({ ...base, RUN_ID: "ref" })
  expect(ran.code, ran.stderr).toBe(0)
  reference = ran.results[0].ok.output
}, 120_000)
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const crashAndResume = async (runId: string, point: string) => {
  const killed = await runWorker({ ...base, RUN_ID: runId, KILL_AT: point })
  expect(killed.signal, `the worker reached ${point}: ${killed.stderr}`).toBe("SIGKILL")
  const resumed = await runWorker({ ...base, RUN_ID: runId })
  expect(resumed.code, resumed.stderr).toBe(0)
  expect(resumed.results[0].ok).toEqual({ _tag: "Completed", output: reference.replaceAll("ref", runId) })
  const counts = executionCounts(await queryEmbedded(dataDir, countsSql(runId)))
  // mutating: never twice; idempotent: one key over every execution, one reservation; readOnly: may repeat
  expect(counts.pay?.runs).toBe(1)
  const payments = await queryEmbedded<{ n: number }>(dataDir, `select count(*)::int as n from payments where order_id = '${runId}'`)
  expect(payments[0]!.n).toBe(1)
  expect(counts.reserve?.keys).toBe(1)
  expect(counts.lookup?.runs).toBeGreaterThanOrEqual(1)
  const reservations = await queryEmbedded<{ n: number }>(dataDir, `select count(*)::int as n from reservations where idem_key like '${runId}/%'`)
  expect(reservations[0]!.n).toBe(1)
  return counts
}

describe("embedded engine: a worker killed with SIGKILL and restarted", () => {
  // DURABLE_KILL_POINT replays a failure seen at a random point.
  const point = process.env.DURABLE_KILL_POINT ?? killPoints[Math.floor(Math.random() * killPoints.length)]!
  it(`finishes the run as an uncrashed one (killed at ${point})`, async () => {
    await crashAndResume(`one-${point}`, point)
  }, 120_000)

  it.skipIf(!long)("re-runs a readOnly tool killed in it, and never a mutating one (counted in the database)", async () => {
    const counts = await crashAndResume("lookup-crash", "in-tool-lookup")
    expect(counts.lookup?.runs).toBe(2)
  }, 120_000)

  it.skipIf(!long)("finishes the run whatever the kill point (test:durable)", async () => {
    for (const p of killPoints) await crashAndResume(`every-${p}`, p)
  }, 900_000)

  it.skipIf(!long)("finishes a run killed at a random moment from outside (test:durable)", async () => {
    const worker = startWorker({ ...base, RUN_ID: "outside", SLOW_TOOLS_MS: "300" })
    await worker.ready
    await new Promise((r) => setTimeout(r, 300 + Math.random() * 1200))
    worker.kill()
    await worker.exit
    const resumed = await runWorker({ ...base, RUN_ID: "outside" })
    expect(resumed.results[0].ok).toEqual({ _tag: "Completed", output: reference.replaceAll("ref", "outside") })
    // A pay attempt killed before it paid is run again (reconcile finds no payment); one payment in all.
    const payments = await queryEmbedded<{ n: number }>(dataDir, `select count(*)::int as n from payments where order_id = 'outside'`)
    expect(payments[0]!.n).toBe(1)
  }, 120_000)

  it("keeps an approval waiting across a restart, decided from another process", async () => {
    const first = startWorker({ ...base, AGENT: "bank", RUN_ID: "approve-1", STAY: "1" })
    await until(() => first.results.length > 0, 60_000, "the run to wait for a decision")
    expect(first.results[0].ok._tag).toBe("Suspended")
    first.kill()
    await first.exit
    const decided = await runWorker({ ...base, AGENT: "bank", RUN_ID: "approve-1", MODE: "decide" })
    expect(decided.results[0], decided.stderr).toEqual({ decided: ["t1"] })
    const resumed = await runWorker({ ...base, AGENT: "bank", RUN_ID: "approve-1", MODE: "result" })
    expect(resumed.results[0].ok).toEqual({ _tag: "Completed", output: "done: sent 500" })
    const counts = executionCounts(await queryEmbedded(dataDir, countsSql("approve-1")))
    expect(counts.transfer?.keys).toBe(1)
  }, 180_000)

  it("ends a run whose maxDuration passed while its worker was down", async () => {
    const first = startWorker({ ...base, AGENT: "bank", RUN_ID: "deadline-1", STAY: "1", MAX_DURATION_MS: "3000" })
    await until(() => first.results.length > 0, 60_000, "the run to wait for a decision")
    const startedAt = Date.now()
    first.kill()
    await first.exit
    await new Promise((r) => setTimeout(r, Math.max(0, 3500 - (Date.now() - startedAt))))
    const resumed = await runWorker({ ...base, AGENT: "bank", RUN_ID: "deadline-1", MODE: "result", MAX_DURATION_MS: "3000" })
    expect(resumed.results[0].error, resumed.stderr).toBe("BudgetExceeded")
    expect(resumed.results[0].detail.reason).toBe("duration")
    const counts = executionCounts(await queryEmbedded(dataDir, countsSql("deadline-1")))
    expect(counts.transfer).toBeUndefined()
  }, 180_000)
})
