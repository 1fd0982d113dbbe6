import { afterEach, describe, expect, it } from "vitest"
import { type Studio, startStudio } from "../../../src/studio/index.ts"
import { call, eventually, readSse, testAgents } from "./support.ts"

let studio: Studio | undefined
afterEach(async () => {
  await studio?.close()
  studio = undefined
})

const start = async () => {
  const { agents, ran } = testAgents()
  studio = await startStudio({ agents, port: 0 })
  return { studio, ran }
}

describe("studio API over HTTP on 127.0.0.1", () => {
  it("lists the exported agents and composites with skills, tools, budgets and input schema", async () => {
    const { studio } = await start()
    expect(studio.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}$/)
    const { status, body } = await call(studio, "GET", "/api/agents")
    expect(status).toBe(200)
    expect(body.map((a: any) => [a.id, a.kind])).toEqual([["calculator", "agent"], ["teller", "agent"], ["sleeper", "agent"], ["research", "composite"]])
    const calculator = body[0]
    expect(calculator.skills).toEqual([{ name: "sum", description: "Adds numbers", tools: ["add"] }])
    expect(calculator.budgets.maxTurns).toBe(5)
    expect(calculator.budgets.maxTokens).toBeNull()
    expect(calculator.inputJsonSchema).toEqual({ type: "string" })
    const add = calculator.tools.find((t: any) => t.name === "add")
    expect(add).toMatchObject({ effect: "readOnly", approval: "never", jsonSchema: { type: "object", required: ["a", "b"] } })
    expect(body[1].tools.find((t: any) => t.name === "transfer").approval).toBe("conditional")
    expect(body[3].members).toEqual(["first", "second"])
  })

  it("starts a run, streams its events live over SSE until it ends, and summarises it", async () => {
    const { studio } = await start()
    const started = await call(studio, "POST", "/api/agents/calculator/runs", { input: "2 + 3?" })
    expect(started.status).toBe(200)
    const runId: string = started.body.runId
    expect(runId).toMatch(/^run_/)
    const stream = await readSse(`${studio.origin}/api/runs/${runId}/stream`, { authorization: `Bearer ${studio.token}` })
    expect(stream.status).toBe(200)
    const events = stream.messages.filter((m) => m.event === undefined).map((m) => m.data)
    const tags = events.map((e) => e.event._tag)
    expect(tags[0]).toBe("RunStart")
    expect(tags).toContain("ToolCallDelta")
    expect(tags).toContain("ToolUse")
    expect(tags.at(-1)).toBe("RunEnd")
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1))
    expect(stream.messages.at(-1)).toMatchObject({ event: "end", data: { runId, status: "completed" } })

    const detail = await call(studio, "GET", `/api/runs/${runId}`)
    expect(detail.body.summary).toMatchObject({ runId, agent: "calculator", status: "completed", source: "studio", turns: 2, tokens: { input: 50, output: 12, total: 62 } })
    expect(detail.body.requests).toHaveLength(2)
    expect(detail.body.requests[0]).toMatchObject({ turn: 1, tools: ["add"], finishReason: "tool-calls" })
    expect(detail.body.requests[0].system).toContain("You add.")
    expect(detail.body.requests[1].messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool"])
    expect(detail.body.budgets.maxTurns).toEqual({ limit: 5, used: 2 })
    expect(detail.body.output).toBe("It is 5.")

    // Resuming from a Last-Event-ID sends only what came after it.
    const rest = await readSse(`${studio.origin}/api/runs/${runId}/stream`, { authorization: `Bearer ${studio.token}`, "last-event-id": String(events.length - 1) })
    expect(rest.messages.filter((m) => m.event === undefined).map((m) => m.data.id)).toEqual([events.length])
  })

  it("lists runs newest first, filtered by status and agent, and refuses a bad query", async () => {
    const { studio } = await start()
    const a = (await call(studio, "POST", "/api/agents/calculator/runs", { input: "1" })).body.runId
    const b = (await call(studio, "POST", "/api/agents/teller/runs", { input: "pay bob 500" })).body.runId
    await eventually(async () => (await call(studio, "GET", `/api/runs/${b}`)).body.summary.status === "suspended" || undefined)
    await eventually(async () => (await call(studio, "GET", `/api/runs/${a}`)).body.summary.status === "completed" || undefined)
    expect((await call(studio, "GET", "/api/runs")).body.map((r: any) => r.runId)).toEqual([b, a])
    expect((await call(studio, "GET", "/api/runs?status=suspended")).body.map((r: any) => r.runId)).toEqual([b])
    expect((await call(studio, "GET", "/api/runs?agent=calculator")).body.map((r: any) => r.runId)).toEqual([a])
    expect((await call(studio, "GET", "/api/runs?limit=1")).body).toHaveLength(1)
    expect((await call(studio, "GET", "/api/runs?status=bogus")).status).toBe(400)
    expect((await call(studio, "GET", "/api/runs?limit=-1")).status).toBe(400)
    expect((await call(studio, "GET", "/api/runs/nope")).status).toBe(404)
    expect((await call(studio, "POST", "/api/agents/nope/runs", { input: "x" })).status).toBe(404)
    expect((await call(studio, "POST", "/api/agents/calculator/runs", "{not json")).status).toBe(400)
  })

  it("decodes a typed input from its JSON form with the agent's input Schema, and refuses one that does not decode", async () => {
    const { agent, text } = await import("../../../src/index.ts")
    const { scriptedModel } = await import("../../../src/testing/index.ts")
    const { Schema } = await import("effect")
    const planner = agent("planner", { input: Schema.Struct({ city: Schema.String, when: Schema.Date }) })
      .model(scriptedModel((r) => text(String(r.messages.at(-1)?.content))))
    studio = await startStudio({ agents: { planner }, port: 0 })
    const s = studio
    const [info] = (await call(s, "GET", "/api/agents")).body
    expect(info.inputJsonSchema).toMatchObject({ type: "object", required: ["city", "when"] })
    const runId = (await call(s, "POST", "/api/agents/planner/runs", { input: { city: "Oslo", when: "2026-01-02T00:00:00.000Z" } })).body.runId
    const detail = await eventually(async () => {
      const d = (await call(s, "GET", `/api/runs/${runId}`)).body
      return d.summary.status === "completed" ? d : undefined
    })
    expect(JSON.parse(detail.output)).toEqual({ city: "Oslo", when: "2026-01-02T00:00:00.000Z" })
    const refused = await call(s, "POST", "/api/agents/planner/runs", { input: { city: 3, when: "never" } })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe("InputInvalid")
    expect(String(refused.body.details)).toContain("city")
    expect((await call(s, "GET", "/api/runs")).body).toHaveLength(1)
  })

  it("an agent without an input Schema takes text, as its input schema says: any other JSON is 400 InputInvalid and nothing runs", async () => {
    const { studio } = await start()
    for (const input of [5, null, { a: 1 }, ["x"], true]) {
      const refused = await call(studio, "POST", "/api/agents/calculator/runs", { input })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toBe("InputInvalid")
      expect(String(refused.body.details)).toContain("Expected string")
    }
    // The composite whose first member takes text, likewise.
    expect((await call(studio, "POST", "/api/agents/research/runs", { input: 7 })).status).toBe(400)
    expect((await call(studio, "GET", "/api/runs")).body).toHaveLength(0)
    expect((await call(studio, "POST", "/api/agents/calculator/runs", { input: "2 + 3?" })).status).toBe(200)
  })

  it("runs a composite: its own run and its members' runs as children", async () => {
    const { studio } = await start()
    const runId = (await call(studio, "POST", "/api/agents/research/runs", { input: "effect" })).body.runId
    const detail = await eventually(async () => {
      const d = (await call(studio, "GET", `/api/runs/${runId}`)).body
      return d.summary.status === "completed" ? d : undefined
    })
    expect(detail.summary.kind).toBe("composite")
    expect(detail.children).toHaveLength(2)
    const children = await Promise.all(detail.children.map(async (id: string) => (await call(studio, "GET", `/api/runs/${id}`)).body.summary))
    expect(children.map((c: any) => [c.agent, c.parentRunId, c.status])).toEqual([["first", runId, "completed"], ["second", runId, "completed"]])
    expect(detail.output).toBe("essay on facts about effect")
  })

  it("stops a running run: 202, then it ends cancelled and its stream ends", async () => {
    const { studio } = await start()
    const runId = (await call(studio, "POST", "/api/agents/sleeper/runs", { input: "go" })).body.runId
    await eventually(async () => (await call(studio, "GET", `/api/runs/${runId}`)).body.events.some((e: any) => e.event._tag === "ModelResponse") || undefined)
    const streaming = readSse(`${studio.origin}/api/runs/${runId}/stream`, { authorization: `Bearer ${studio.token}` })
    const stopped = await call(studio, "POST", `/api/runs/${runId}/stop`)
    expect(stopped.status).toBe(202)
    const stream = await streaming
    expect(stream.messages.at(-1)).toMatchObject({ event: "end", data: { status: "cancelled" } })
    expect((await call(studio, "GET", `/api/runs/${runId}`)).body.summary.status).toBe("cancelled")
    expect((await call(studio, "POST", `/api/runs/${runId}/stop`)).status).toBe(409)
  })

  it("stopping a composite's member stops the composite it belongs to", async () => {
    const { agents } = testAgents()
    const { pipeline } = await import("../../../src/index.ts")
    studio = await startStudio({ agents: { slow: pipeline("slow-flow", agents.sleeper, agents.calculator) }, port: 0 })
    const s = studio
    const runId = (await call(s, "POST", "/api/agents/slow/runs", { input: "go" })).body.runId
    const child = await eventually(async () => (await call(s, "GET", `/api/runs/${runId}`)).body.children[0])
    await eventually(async () => (await call(s, "GET", `/api/runs/${child}`)).body.events.some((e: any) => e.event._tag === "ModelResponse") || undefined)
    expect((await call(s, "POST", `/api/runs/${child}/stop`)).status).toBe(202)
    await eventually(async () => (await call(s, "GET", `/api/runs/${runId}`)).body.summary.status === "cancelled" || undefined)
    expect((await call(s, "GET", `/api/runs/${child}`)).body.summary.status).toBe("cancelled")
  })

  it("pushes list changes over /api/events", async () => {
    const { studio } = await start()
    const listening = readSse(`${studio.origin}/api/events`, { authorization: `Bearer ${studio.token}` }, 1500)
    await new Promise((r) => setTimeout(r, 200))
    const runId = (await call(studio, "POST", "/api/agents/teller/runs", { input: "pay bob 500" })).body.runId
    const { messages } = await listening
    expect(messages.map((m) => m.data)).toContainEqual({ type: "run", runId })
    expect(messages.map((m) => m.data)).toContainEqual({ type: "approval", runId })
  })

  it("answers a known path called with another method 405 with the methods it accepts in Allow; an unknown path 404", async () => {
    const { studio } = await start()
    const answer = async (method: string, path: string) => {
      const response = await fetch(`${studio.origin}${path}`, { method, headers: { authorization: `Bearer ${studio.token}` } })
      const text = await response.text()
      return { status: response.status, allow: response.headers.get("allow"), error: text === "" ? undefined : JSON.parse(text).error }
    }
    const refused = (allow: string) => ({ status: 405, allow, error: "MethodNotAllowed" })
    expect(await answer("POST", "/api/agents")).toEqual(refused("GET"))
    expect(await answer("GET", "/api/agents/calculator/runs")).toEqual(refused("POST"))
    expect(await answer("DELETE", "/api/runs/run_x")).toEqual(refused("GET"))
    expect(await answer("GET", "/api/runs/run_x/stop")).toEqual(refused("POST"))
    expect(await answer("POST", "/api/runs/run_x/stream")).toEqual(refused("GET"))
    expect(await answer("PUT", "/api/approvals/run_x")).toEqual(refused("POST"))
    expect(await answer("POST", "/api/events")).toEqual(refused("GET"))
    expect(await answer("GET", "/api/ingest")).toEqual(refused("POST"))
    expect(await answer("PATCH", "/api/import")).toEqual(refused("POST"))
    expect(await answer("HEAD", "/api/sessions")).toEqual({ status: 405, allow: "GET", error: undefined })
    // Outside /api/ only files are served.
    expect(await answer("POST", "/index.html")).toEqual(refused("GET, HEAD"))
    // Unknown paths stay 404, whatever the method.
    expect(await answer("GET", "/api/nope")).toEqual({ status: 404, allow: null, error: "NotFound" })
    expect(await answer("POST", "/api/agents/calculator")).toEqual({ status: 404, allow: null, error: "NotFound" })
    expect(await answer("GET", "/api/runs/run_x/stop/now")).toEqual({ status: 404, allow: null, error: "NotFound" })
    // The refused calls changed nothing.
    expect((await call(studio, "GET", "/api/runs")).body).toEqual([])
  })
})

describe("studio security", () => {
  it("needs the token on every API call, and takes it as Bearer, header or query, never as a cookie", async () => {
    const { studio } = await start()
    const bare = await fetch(`${studio.origin}/api/agents`)
    expect(bare.status).toBe(401)
    expect((await fetch(`${studio.origin}/api/agents`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401)
    expect((await fetch(`${studio.origin}/api/ingest`, { method: "POST", body: "{}" })).status).toBe(401)
    expect((await fetch(`${studio.origin}/api/agents`, { headers: { "x-studio-token": studio.token } })).status).toBe(200)
    expect((await fetch(`${studio.origin}/api/agents?token=${studio.token}`)).status).toBe(200)
    // Cookies are not kept apart by port: every other server on the host would receive one.
    const page = await fetch(studio.url)
    expect(page.headers.get("set-cookie")).toBeNull()
    expect((await fetch(`${studio.origin}/api/agents`, { headers: { cookie: `studio_token=${studio.token}` } })).status).toBe(401)
  })

  it("refuses a foreign Host (DNS rebinding) and a foreign Origin (cross-site posts), token or not", async () => {
    const { studio } = await start()
    const auth = { authorization: `Bearer ${studio.token}` }
    const { request } = await import("node:http")
    const rawStatus = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: studio.port, path: "/api/agents", headers }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on("error", reject)
        req.end()
      })
    expect(await rawStatus({ ...auth, host: "evil.example:80" })).toBe(403)
    expect(await rawStatus({ ...auth, host: `localhost:${studio.port}` })).toBe(200)
    const crossSite = await fetch(`${studio.origin}/api/agents/calculator/runs`, {
      method: "POST",
      headers: { ...auth, origin: "https://evil.example", "content-type": "text/plain" },
      body: JSON.stringify({ input: "x" })
    })
    expect(crossSite.status).toBe(403)
    expect((await call(studio, "GET", "/api/runs")).body).toEqual([])
    expect((await fetch(`${studio.origin}/api/agents`, { headers: { ...auth, origin: studio.origin } })).status).toBe(200)
  })

  it("listening on every interface, takes IP-literal Hosts of its port and still refuses domain names", async () => {
    const { agents } = testAgents()
    studio = await startStudio({ agents, port: 0, host: "0.0.0.0" })
    const s = studio
    const { request } = await import("node:http")
    const rawStatus = (host: string, origin?: string) =>
      new Promise<number>((resolve, reject) => {
        const headers = { host, authorization: `Bearer ${s.token}`, ...(origin === undefined ? {} : { origin }) }
        const req = request({ host: "127.0.0.1", port: s.port, path: "/api/agents", headers }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on("error", reject)
        req.end()
      })
    expect(await rawStatus(`192.168.1.20:${s.port}`)).toBe(200)
    expect(await rawStatus(`evil.example:${s.port}`)).toBe(403)
    expect(await rawStatus(`192.168.1.20:${s.port + 1}`)).toBe(403)
    // A Host without a port names port 80, whatever digit the studio's port ends with.
    expect(await rawStatus(`192.168.1.${s.port % 10}`)).toBe(403)
    // An Origin is the very address the request came to, not any IP literal of the port.
    expect(await rawStatus(`192.168.1.20:${s.port}`, `http://192.168.1.20:${s.port}`)).toBe(200)
    expect(await rawStatus(`192.168.1.20:${s.port}`, `http://6.6.6.6:${s.port}`)).toBe(403)
  })

  it("serves only the front end's own files", async () => {
    const { studio } = await start()
    const index = await fetch(`${studio.origin}/`)
    expect(index.status).toBe(200)
    expect(index.headers.get("content-type")).toContain("text/html")
    expect((await fetch(`${studio.origin}/..%2f..%2fpackage.json`)).status).toBe(404)
    expect((await fetch(`${studio.origin}/%2e%2e/%2e%2e/server/api.ts`)).status).toBe(404)
  })
})
