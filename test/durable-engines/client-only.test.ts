/**
 * A process that only polls, next to runs in flight on the embedded engine (real processes, the
 * worker killed with SIGKILL mid-run). Client-only (`clientOnly: true`) it holds no shards: it sees
 * the run as running, stores nothing, and the restarted worker finishes the run. Started as a runner
 * without the workflows (a misconfiguration) it holds the shards and Effect Cluster stores an "Entity
 * type … not registered" defect as the run's reply: that reply is never taken as the run's result,
 * neither by the poller nor by the worker that comes back, which finishes the run (test:durable).
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

const strayReplies = async () =>
  (await queryEmbedded<{ n: number }>(dataDir, `select count(*)::int as n from cluster_replies where payload::text like '%not registered%'`))[0]!.n

const pollWhileDown = async (runId: string, clientOnly: boolean) => {
  const killed = await runWorker({ ...base, RUN_ID: runId, KILL_AT: "in-tool-reserve" })
  expect(killed.signal, killed.stderr).toBe("SIGKILL")
  // A short registration timeout: a process holding shards without the workflow answers within 2 s.
  const poller = await runWorker({ ...base, MODE: "poll", RUN_ID: runId, POLL_MS: "4000", ENTITY_REGISTRATION_MS: "1000", ...(clientOnly ? { CLIENT_ONLY: "1" } : {}) })
  expect(poller.code, poller.stderr).toBe(0)
  expect(poller.results[0]).toEqual({ polled: "none" })
  const stray = await strayReplies()
  const resumed = await runWorker({ ...base, RUN_ID: runId })
  expect(resumed.code, resumed.stderr).toBe(0)
  expect(resumed.results[0].ok).toEqual({ _tag: "Completed", output: reference.replaceAll("ref", runId) })
  return { stray }
}

describe("embedded engine: a process that only polls while the worker is down", () => {
  it("client-only: holds no shards, stores nothing for the runs in flight; the worker that comes back finishes them", async () => {
    const { stray } = await pollWhileDown("client-1", true)
    expect(stray).toBe(0)
  }, 120_000)

  it.skipIf(!long)("started as a runner without the workflows: the stored 'not registered' defect is never a run's result, and the run still finishes", async () => {
    await pollWhileDown("runner-1", false)
  }, 120_000)
})
