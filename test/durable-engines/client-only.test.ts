/**
 * A process that only polls, next to runs in flight on the embedded engine (real processes, the
 * worker killed with SIGKILL mid-run). Client-only (`clientOnly: true`) it runs nothing: it sees the
 * run as running, changes nothing of it (the run's recorded steps are the same after it), and the
 * restarted worker finishes the run. Started as a runner without the workflows (a misconfiguration)
 * it picks up nothing either (an execution is picked up when its workflow registers), and the worker
 * that comes back finishes the run (test:durable).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { queryEmbedded, runWorker } from "./processes.ts"

const long = process.env.DURABLE_LONG === "1"
const dataDir = mkdtempSync(join(tmpdir(), "durable-client-only-"))
const base = { ENGINE: "embedded", DATA_DIR: dataDir }
// What an uncrashed run of `worker.ts`'s shopper answers (crash-embedded.test.ts checks it against a real run).
const reference = JSON.stringify([["lookup", "lamp: 30 EUR, in stock"], ["reserve", "reserved lamp"], ["pay", "paid 30 for ref"]])

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** What the engine recorded of the run: its execution row and steps. */
const recorded = async (runId: string) =>
  await queryEmbedded<{ status: string; steps: number }>(
    dataDir,
    `select e.status, (select count(*)::int from agent_workflow_steps s where s.execution_id = e.execution_id) as steps
     from agent_workflow_executions e where e.payload like '%"${runId}"%'`
  )

const pollWhileDown = async (runId: string, clientOnly: boolean) => {
  const killed = await runWorker({ ...base, RUN_ID: runId, KILL_AT: "in-tool-reserve" })
  expect(killed.signal, killed.stderr).toBe("SIGKILL")
  // A short registration timeout: a process holding shards without the workflow answers within 2 s.
  const before = await recorded(runId)
  expect(before).toEqual([{ status: "running", steps: expect.any(Number) }])
  const poller = await runWorker({ ...base, MODE: "poll", RUN_ID: runId, POLL_MS: "4000", ...(clientOnly ? { CLIENT_ONLY: "1" } : {}) })
  expect(poller.code, poller.stderr).toBe(0)
  expect(poller.results[0]).toEqual({ polled: "none" })
  expect(await recorded(runId)).toEqual(before)
  const resumed = await runWorker({ ...base, RUN_ID: runId })
  expect(resumed.code, resumed.stderr).toBe(0)
  expect(resumed.results[0].ok).toEqual({ _tag: "Completed", output: reference.replaceAll("ref", runId) })
}

describe("embedded engine: a process that only polls while the worker is down", () => {
  it("client-only: runs nothing, changes nothing of the runs in flight; the worker that comes back finishes them", async () => {
    await pollWhileDown("client-1", true)
  }, 120_000)

  it.skipIf(!long)("started as a runner without the workflows: picks up nothing, and the worker that comes back finishes the run", async () => {
    await pollWhileDown("runner-1", false)
  }, 120_000)
})
