import { execFile } from "node:child_process"
import { createServer } from "node:net"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"
import { type Studio, startStudio } from "../../../src/studio/index.ts"
import { call, eventually } from "./support.ts"

const run = promisify(execFile)
const app = new URL("./fixtures/ingest-app.ts", import.meta.url).pathname

let studio: Studio | undefined
afterEach(async () => {
  await studio?.close()
  studio = undefined
})

const runApp = async (url: string) => {
  const { stdout } = await run(process.execPath, ["--import", "tsx", app], { env: { ...process.env, EFFECT_AGENT_STUDIO_URL: url }, cwd: process.cwd(), timeout: 60_000 })
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as { output: string; ranMs: number; dropped: number }
}

describe("runs of another process, sent with studioHooks", () => {
  it("reach the studio's run list and detail with source ingest", async () => {
    studio = await startStudio({ port: 0 })
    const result = await runApp(studio.url)
    expect(result).toMatchObject({ output: "answered", dropped: 0 })
    const s = studio
    const [summary] = await eventually(async () => {
      const runs = (await call(s, "GET", "/api/runs")).body
      return runs.length > 0 && runs[0].status === "completed" ? runs : undefined
    })
    expect(summary).toMatchObject({ agent: "support-bot", source: "ingest", status: "completed", turns: 2 })
    const detail = (await call(s, "GET", `/api/runs/${summary.runId}`)).body
    expect(detail.events.map((e: any) => e.event._tag)).toEqual(["RunStart", "SkillChosen", "Turn", "ModelCall", "ModelResponse", "ToolUse", "Turn", "ModelCall", "ModelResponse", "RunEnd"])
    expect(detail.requests[0].tools).toContain("lookup")
    // The application's process cannot be stopped from here.
    expect((await call(s, "POST", `/api/runs/${summary.runId}/stop`)).status).toBe(409)
  }, 90_000)

  it("never block or fail the application when the studio is down", async () => {
    // A port nobody listens on.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const result = await runApp(`http://127.0.0.1:${port}/?token=whatever`)
    expect(result.output).toBe("answered")
    expect(result.dropped).toBe(10)
    expect(result.ranMs).toBeLessThan(5000)
  }, 90_000)

  it("without a studio URL, send nothing and count every event as dropped", async () => {
    const { agent, text } = await import("../../../src/index.ts")
    const { scriptedModel } = await import("../../../src/testing/index.ts")
    const { studioHooks } = await import("../../../src/studio/index.ts")
    const hooks = studioHooks({ url: "" })
    expect(await agent("quiet").model(scriptedModel(text("hi"))).onEvent(hooks).run("x")).toBe("hi")
    await hooks.flush()
    expect(hooks.dropped).toBeGreaterThan(0)
  })

  it("refuses an ingest without the token, and skips items that are not events", async () => {
    studio = await startStudio({ port: 0 })
    const refused = await fetch(`${studio.origin}/api/ingest`, { method: "POST", body: JSON.stringify({ events: [] }) })
    expect(refused.status).toBe(401)
    const answer = await call(studio, "POST", "/api/ingest", {
      events: [{ at: 1, event: { _tag: "RunStart", runId: "run_x", agent: "a", input: "hi" } }, { at: 2, event: "nope" }, null, { at: 3, event: { _tag: "Turn" } }]
    })
    expect(answer).toEqual({ status: 202, body: { accepted: 1 } })
    expect((await call(studio, "POST", "/api/ingest", { events: "no" })).status).toBe(400)
  })
})
