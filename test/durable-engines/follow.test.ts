/**
 * Following a durable run across real process deaths. Embedded: the worker serves the run's events
 * over SSE (`followResponse`); the test follows them live, the worker is SIGKILLed inside the
 * mutating `pay` (after paying, before its outcome is recorded), a restarted worker finishes the run,
 * and the test reconnects with `Last-Event-ID`. PostgreSQL: a client-only follower process is killed
 * mid-run and a new one re-attaches from the last id it printed, while the runner is killed inside
 * `pay` and restarted. Either way: every event exactly once, ids 1, 2, … in order, the same events as
 * an uncrashed run's, and one payment.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { postgresAvailable, startPostgres, type TestPostgres } from "../support/postgres.ts"
import { countsSql, executionCounts, queryEmbedded, queryPostgres, runWorker, startWorker, until, type Worker } from "./processes.ts"

interface Seen {
  readonly id: number
  readonly tag: string
}

/** Reads SSE frames from `url` into `seen` until the stream ends or breaks (the worker died). */
const followSse = async (url: string, seen: Array<Seen>, lastEventId?: number): Promise<"ended" | "broken"> => {
  try {
    const response = await fetch(url, { headers: lastEventId === undefined ? {} : { "last-event-id": String(lastEventId) } })
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    while (true) {
      const { done, value } = await reader.read()
      if (done) return "ended"
      buffer += decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const fields = Object.fromEntries(frame.split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]))
        if (fields.id !== undefined) seen.push({ id: Number(fields.id), tag: fields.event ?? "" })
      }
    }
  } catch {
    return "broken"
  }
}

const expectOnceInOrder = (seen: ReadonlyArray<Seen>, reference: ReadonlyArray<string>) => {
  expect(seen.map((s) => s.id)).toEqual(seen.map((_, i) => i + 1))
  expect(seen.map((s) => s.tag)).toEqual(reference)
}

/** The shopper's events, uncrashed (as the journal of run `ref` holds them). */
const shopperEvents = ["RunStart", "SkillChosen", "Turn", "ModelResponse", "ToolUse", "ToolUse", "Turn", "ModelResponse", "ToolUse", "Turn", "ModelResponse", "RunEnd"]

describe("following a durable run, embedded engine, over SSE", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "durable-follow-"))
  const base = { ENGINE: "embedded", DATA_DIR: dataDir }
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it("a worker killed inside the mutating pay: the client re-attaches with Last-Event-ID and sees every event once; pay ran once", async () => {
    const port = 21500 + Math.floor(Math.random() * 1500)
    const url = `http://127.0.0.1:${port}/runs/f-1/events`
    const seen: Array<Seen> = []
    let second: Worker | undefined
    try {
      const first = startWorker({ ...base, RUN_ID: "f-1", KILL_AT: "in-tool-pay", SLOW_TOOLS_MS: "400", FOLLOW_PORT: String(port) })
      await first.ready
      const live = await followSse(url, seen)
      expect(live).toBe("broken")
      expect((await first.exit).signal).toBe("SIGKILL")
      const beforeKill = seen.length
      // Seen live: the first turn and its tools; not the run's end.
      expect(beforeKill).toBeGreaterThanOrEqual(5)
      expect(seen.some((s) => s.tag === "RunEnd")).toBe(false)
      second = startWorker({ ...base, RUN_ID: "f-1", FOLLOW_PORT: String(port) })
      await second.ready
      expect(await followSse(url, seen, seen.at(-1)!.id)).toBe("ended")
      await until(() => second!.results.length > 0, 30_000, "the restarted worker's result")
      expect(second.results[0].ok?._tag).toBe("Completed")
      expectOnceInOrder(seen, shopperEvents)
    } finally {
      second?.kill()
      await second?.exit
    }
    const counts = executionCounts(await queryEmbedded(dataDir, countsSql("f-1")))
    expect(counts.pay?.runs).toBe(1)
    const payments = await queryEmbedded<{ n: number }>(dataDir, `select count(*)::int as n from payments where order_id = 'f-1'`)
    expect(payments[0]!.n).toBe(1)
    // The journal holds each event once: no row beyond the ids the client saw.
    const rows = await queryEmbedded<{ n: number }>(dataDir, `select count(*)::int as n from agent_run_events where run_id = 'f-1'`)
    expect(rows[0]!.n).toBe(seen.length)
  }, 120_000)
})

const hasPostgres = postgresAvailable()

describe.skipIf(!hasPostgres)("following a durable run, PostgreSQL, from a client-only process", () => {
  let pg: TestPostgres | undefined
  afterAll(() => pg?.stop(), 60_000)

  it("a follower killed mid-run re-attaches from its last id while the runner is killed inside pay and restarted: every event once; pay ran once", async () => {
    pg = await startPostgres()
    let port = 23000 + Math.floor(Math.random() * 1500)
    const base = { ENGINE: "postgres", DATABASE_URL: pg.url }
    // The tables exist before the follower starts (the first runner creates them).
    const warm = await runWorker({ ...base, RUNNER_PORT: String(port++), RUN_ID: "warm" })
    expect(warm.code, warm.stderr).toBe(0)
    const follower = startWorker({ ...base, MODE: "follow", RUN_ID: "pf-1" })
    await follower.ready
    const runner = startWorker({ ...base, RUNNER_PORT: String(port++), RUN_ID: "pf-1", KILL_AT: "in-tool-pay", SLOW_TOOLS_MS: "400" })
    let restarted: Worker | undefined
    try {
      // The follower goes away after the first turn's model answer.
      await until(() => follower.results.length >= 4, 60_000, "the follower's first events")
      follower.kill()
      await follower.exit
      const first: Array<Seen> = follower.results.filter((r) => r.id !== undefined)
      expect((await runner.exit).signal).toBe("SIGKILL")
      restarted = startWorker({ ...base, RUNNER_PORT: String(port++), RUN_ID: "pf-1" })
      const again = await runWorker({ ...base, MODE: "follow", RUN_ID: "pf-1", AFTER: String(first.at(-1)!.id) })
      expect(again.code, again.stderr).toBe(0)
      expect(again.results.at(-1)).toEqual({ done: true })
      const rest: Array<Seen> = again.results.filter((r) => r.id !== undefined)
      expectOnceInOrder([...first, ...rest], shopperEvents)
      expect((await restarted.exit).code).toBe(0)
    } finally {
      runner.kill()
      restarted?.kill()
    }
    const counts = executionCounts(queryPostgres(pg.url, countsSql("pf-1")))
    expect(counts.pay?.runs).toBe(1)
    expect(queryPostgres(pg.url, `select 1 from payments where order_id = 'pf-1'`).length).toBe(1)
    expect(queryPostgres(pg.url, `select 1 from agent_run_events where run_id = 'pf-1'`).length).toBe(shopperEvents.length)
  }, 180_000)
})
