/**
 * The studio on the embedded durable engine (PGlite files): a run that suspended in an earlier process
 * is listed from the engine's store, waits in the approvals inbox, and completes when approved from the
 * studio (which provides the runner, as the one process that may open the directory). About 50 s
 * (two engine starts, shard acquisition): it runs with the long durable suites, `DURABLE_LONG=1`
 * (`DURABLE_LONG=1 npx vitest run test/studio/api/durable-embedded.test.ts`); the same studio code is
 * covered on the in-memory engine by sources.test.ts in every run.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { agent, text, tool, toolCalls } from "../../../src/index.ts"
import { durable } from "../../../src/durable/index.ts"
import { embeddedEngine } from "../../../src/durable/embedded.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { type Studio, startStudio } from "../../../src/studio/index.ts"
import { call, eventually } from "./support.ts"

let studio: Studio | undefined
let dir: string | undefined
afterEach(async () => {
  await studio?.close()
  studio = undefined
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const payer = (ran: Array<string>) => {
  const transfer = tool("transfer", {
    args: Schema.Struct({ to: Schema.String }),
    needsApproval: true,
    run: ({ to }) => {
      ran.push(to)
      return `sent to ${to}`
    }
  })
  const model = scriptedModel((request) =>
    request.messages.some((m) => m.role === "tool") ? text("paid") : toolCalls([{ id: "t1", name: "transfer", arguments: { to: "zoe" } }])
  )
  return durable(agent("payer").model(model).tools({ transfer }))
}

describe.skipIf(process.env.DURABLE_LONG !== "1")("studio on the embedded durable engine", () => {
  it("lists a run suspended by an earlier process and completes it when approved", async () => {
    dir = mkdtempSync(join(tmpdir(), "studio-embedded-"))
    const engine = () => embeddedEngine({ dataDir: dir! })
    const before: Array<string> = []
    const first = payer(before)
    const runtime = ManagedRuntime.make(first.layer.pipe(Layer.provideMerge(engine())))
    const result = await runtime.runPromise(first.run("pay zoe", { runId: "e-1" }).pipe(Effect.timeout("60 seconds")))
    expect(result._tag).toBe("Suspended")
    await runtime.dispose()

    const ran: Array<string> = []
    const d = payer(ran)
    studio = await startStudio({ port: 0, durable: { agents: [d], layer: d.layer.pipe(Layer.provideMerge(engine())), pollMs: 200 } })
    const s = studio
    const [item] = await eventually(async () => {
      const inbox = (await call(s, "GET", "/api/approvals")).body
      return inbox.length > 0 ? inbox : undefined
    }, 60_000)
    expect(item).toMatchObject({ runId: "e-1", source: "durable", calls: [{ callId: "t1", tool: "transfer", arguments: { to: "zoe" } }] })
    expect((await call(s, "POST", "/api/approvals/e-1", { decisions: [{ callId: "t1", decision: "approve" }] })).status).toBe(200)
    await eventually(async () => (await call(s, "GET", "/api/runs/e-1")).body.summary.status === "completed" || undefined, 60_000)
    expect(ran).toEqual(["zoe"])
    expect(before).toEqual([])
  }, 150_000)
})
