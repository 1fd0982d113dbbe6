/**
 * The crash loop (`npm run test:crash`; skipped in `npm test`): separate worker processes killed with
 * SIGKILL at seeded random moments and restarted after each kill, on the embedded engine (one worker
 * at a time) and on PostgreSQL (two runners, a random one killed each time, plus a client process).
 * It reports kills, lost runs, wrong outputs, duplicated mutating calls (a second payment), duplicated
 * idempotent effects (a second reservation), bypassed approvals (an approval-gated transfer that ran
 * undecided) and recovery times, and fails on any loss or duplicate.
 *
 * `CRASH_SEED` replays a loop (the seed is printed); `CRASH_KILLS` (default 12) and `CRASH_RUNS`
 * (runs started per kill, default 4) size it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { postgresAvailable, startPostgres, type TestPostgres } from "../support/postgres.ts"
import { queryEmbedded, queryPostgres, runWorker, startWorker, until, type Worker } from "./processes.ts"

const enabled = process.env.CRASH_LOOP === "1"
const seed = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31))
const kills = Number(process.env.CRASH_KILLS ?? 12)
const runs = Number(process.env.CRASH_RUNS ?? 4)

/** mulberry32: a small seeded generator, so a loop replays from its seed. */
const seeded = (s: number) => () => {
  s = (s + 0x6d2b79f5) | 0
  let t = Math.imul(s ^ (s >>> 15), 1 | s)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const median = (xs: ReadonlyArray<number>) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!)

interface Report {
  readonly engine: string
  readonly seed: number
  kills: number
  lostRuns: number
  wrongOutputs: number
  duplicatedMutating: number
  duplicatedIdempotent: number
  bypassedApprovals: number
  /** Runs whose event journal (what `d.follow` gives) is not the uncrashed run's events once each, ids 1..n. */
  brokenJournals: number
  recoveryMs: Array<number>
}

const print = (r: Report) =>
  console.log(
    `crash loop ${r.engine} (seed ${r.seed}): ${r.kills} kills, ${r.lostRuns} lost runs, ${r.wrongOutputs} wrong outputs, ` +
      `${r.duplicatedMutating} duplicated mutating calls, ${r.duplicatedIdempotent} duplicated idempotent effects, ${r.bypassedApprovals} bypassed approvals, ${r.brokenJournals} broken event journals; ` +
      `recovery ${r.recoveryMs.length > 0 ? `${Math.min(...r.recoveryMs)}-${Math.max(...r.recoveryMs)} ms (median ${median(r.recoveryMs)})` : "n/a"}`
  )

const shopIds = (prefix: string) => Array.from({ length: runs }, (_, i) => `${prefix}-${i}`)
const bankIds = (prefix: string) => [`${prefix}-bank-0`, `${prefix}-bank-1`]

/** Counts the damage from the rows the tools wrote. */
const judge = async (
  report: Report,
  query: <A>(sql: string) => Promise<ReadonlyArray<A>>,
  ids: ReadonlyArray<string>,
  banks: ReadonlyArray<string>,
  results: ReadonlyArray<any>,
  reference: string
) => {
  const outputs = results.filter((r) => r.ok?._tag === "Completed").map((r) => String(r.ok.output))
  const errors = results.filter((r) => r.error !== undefined)
  if (errors.length > 0) console.log(`crash loop ${report.engine}: runs ended with errors: ${JSON.stringify(errors).slice(0, 2000)}`)
  for (const id of ids) {
    const expected = reference.replaceAll("ref", id)
    const finished = outputs.find((o) => o === expected)
    if (finished === undefined) {
      if (outputs.some((o) => o.includes(`for ${id}"`))) report.wrongOutputs++
      else report.lostRuns++
    }
    const payments = (await query<{ n: number }>(`select count(*)::int as n from payments where order_id = '${id}'`))[0]!.n
    if (payments > 1) report.duplicatedMutating += payments - 1
    if (payments === 0 && finished !== undefined) report.wrongOutputs++
    const reservations = (await query<{ n: number }>(`select count(*)::int as n from reservations where idem_key like '${id}/%'`))[0]!.n
    if (reservations > 1) report.duplicatedIdempotent += reservations - 1
    const journal = await query<{ id: number | string; tag: string }>(`select id, event->>'_tag' as tag from agent_run_events where run_id = '${id}' order by id`)
    const once = journal.every((e, i) => Number(e.id) === i + 1) && journal.map((e) => e.tag).join() === shopperEvents.join()
    if (finished !== undefined && !once) {
      report.brokenJournals++
      console.log(`crash loop ${report.engine}: the journal of ${id} is ${JSON.stringify(journal)}`)
    }
  }
  for (const id of banks) {
    const transfers = (await query<{ n: number }>(`select count(*)::int as n from executions where tool = 'transfer' and order_id = '${id}'`))[0]!.n
    report.bypassedApprovals += transfers
  }
}

/** The shopper's journalled events, uncrashed. */
const shopperEvents = ["RunStart", "SkillChosen", "Turn", "ModelResponse", "ToolUse", "ToolUse", "Turn", "ModelResponse", "ToolUse", "Turn", "ModelResponse", "RunEnd"]

const embeddedDir = mkdtempSync(join(tmpdir(), "durable-crash-loop-"))
afterAll(() => rmSync(embeddedDir, { recursive: true, force: true }))

describe.skipIf(!enabled)("crash loop", () => {
  it("embedded engine: one worker at a time, killed at random and restarted", async () => {
    const random = seeded(seed)
    const base = { ENGINE: "embedded", DATA_DIR: embeddedDir, SLOW_TOOLS_MS: "150", SLOW_AFTER_MS: "300" }
    const report: Report = { engine: "embedded", seed, kills: 0, lostRuns: 0, wrongOutputs: 0, duplicatedMutating: 0, duplicatedIdempotent: 0, bypassedApprovals: 0, brokenJournals: 0, recoveryMs: [] }
    const ref = await runWorker({ ENGINE: "embedded", DATA_DIR: embeddedDir, RUN_ID: "ref" })
    const reference = ref.results[0].ok.output as string
    // Runs waiting for an approval nobody gives: their transfer must never run, whatever is killed.
    const banks = bankIds("e")
    const waiting = await runWorker({ ...base, AGENT: "bank", MODE: "start", RUN_IDS: banks.join(",") })
    expect(waiting.results.every((r) => r.ok?._tag === "Suspended"), waiting.stderr).toBe(true)
    // Each restart starts a new batch and joins every earlier run: there is always work in flight to kill.
    const ids: Array<string> = []
    for (let k = 0; k < kills; k++) {
      ids.push(...shopIds(`e${k}`))
      const started = Date.now()
      const w = startWorker({ ...base, MODE: "start", RUN_IDS: ids.join(",") })
      await w.ready
      report.recoveryMs.push(Date.now() - started)
      await sleep(100 + Math.floor(random() * 2500))
      w.kill()
      const e = await w.exit
      if (e.signal === "SIGKILL") report.kills++
    }
    const last = await runWorker({ ...base, MODE: "start", RUN_IDS: ids.join(",") })
    expect(last.code, last.stderr).toBe(0)
    await judge(report, (sql) => queryEmbedded(embeddedDir, sql), ids, banks, last.results, reference)
    print(report)
    expect(report).toMatchObject({ lostRuns: 0, wrongOutputs: 0, duplicatedMutating: 0, duplicatedIdempotent: 0, bypassedApprovals: 0, brokenJournals: 0 })
  }, 1_800_000)

  it.skipIf(!postgresAvailable())("postgres: two runners, a random one killed and restarted, a client waiting for every run", async () => {
    const random = seeded(seed + 1)
    const pg: TestPostgres = await startPostgres()
    let port = 29000 + Math.floor(random() * 1500)
    const base = { ENGINE: "postgres", DATABASE_URL: pg.url, SLOW_TOOLS_MS: "700", SLOW_AFTER_MS: "300" }
    const report: Report = { engine: "postgres", seed, kills: 0, lostRuns: 0, wrongOutputs: 0, duplicatedMutating: 0, duplicatedIdempotent: 0, bypassedApprovals: 0, brokenJournals: 0, recoveryMs: [] }
    const runner = () => startWorker({ ...base, RUNNER_PORT: String(port++), MODE: "serve" })
    const runners: Array<Worker> = [runner(), runner()]
    try {
      await Promise.all(runners.map((r) => r.ready))
      await sleep(3000)
      const ref = await runWorker({ ENGINE: "postgres", DATABASE_URL: pg.url, MODE: "start", RUN_IDS: "ref" })
      const reference = ref.results[0].ok.output as string
      const banks = bankIds("p")
      const waiting = await runWorker({ ...base, AGENT: "bank", MODE: "start", RUN_IDS: banks.join(",") })
      expect(waiting.results.every((r) => r.ok?._tag === "Suspended"), waiting.stderr).toBe(true)
      // A client per batch (one started before each kill), all waiting for their runs to end.
      const ids: Array<string> = []
      const clients: Array<Worker> = []
      type Row = { readonly order_id: string; readonly pid: number; readonly tool: string; readonly ms: number }
      const rows = () => queryPostgres<Row>(pg.url, `select order_id, pid, tool, (extract(epoch from at) * 1000)::float8 as ms from executions where order_id like 'p%-%'`)
      for (let k = 0; k < kills; k++) {
        const batch = shopIds(`p${k}`)
        ids.push(...batch)
        clients.push(startWorker({ ...base, MODE: "start", RUN_IDS: batch.join(",") }))
        await sleep(300 + Math.floor(random() * 2500))
        const victim = Math.floor(random() * runners.length)
        const pid = runners[victim]!.child.pid
        const before = rows()
        const done = new Set(before.filter((r) => r.tool === "answer").map((r) => r.order_id))
        const inFlight = new Set(before.filter((r) => r.pid === pid && !done.has(r.order_id)).map((r) => r.order_id))
        const killedAt = Date.now()
        runners[victim]!.kill()
        await runners[victim]!.exit
        report.kills++
        runners[victim] = runner()
        // Recovery: the first step another runner makes for a run the killed one was inside.
        if (inFlight.size > 0) {
          const next = () => rows().filter((r) => inFlight.has(r.order_id) && r.pid !== pid && r.ms > killedAt).map((r) => r.ms)
          await until(() => next().length > 0, 90_000, "a killed runner's run to go on").catch(() => {})
          const first = next()
          if (first.length > 0) report.recoveryMs.push(Math.round(Math.min(...first) - killedAt))
        }
      }
      const ended = await Promise.all(clients.map((c) => c.exit))
      await judge(report, async (sql) => queryPostgres(pg.url, sql), ids, banks, ended.flatMap((e) => e.results), reference)
      print(report)
      expect(report).toMatchObject({ lostRuns: 0, wrongOutputs: 0, duplicatedMutating: 0, duplicatedIdempotent: 0, bypassedApprovals: 0, brokenJournals: 0 })
    } finally {
      for (const r of runners) r.kill()
      pg.stop()
    }
  }, 1_800_000)
})
