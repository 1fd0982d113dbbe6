/**
 * `studioHooks` at its borders: events larger than the studio takes in one body (a batch of them, one
 * alone, a studio started with a smaller limit) still bring their run to the studio whole in shape,
 * and a malformed studio URL or option is refused at once, naming where it came from.
 */
import { Schema } from "effect"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { AgentConfigError, agent, text, tool, toolCalls } from "../../../src/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { type Studio, startStudio, studioHooks, type StudioHooksOptions } from "../../../src/studio/index.ts"
import { fitEventJson, utf8Bytes } from "../../../src/studio/collect/fit-event.ts"
import { call, eventually } from "./support.ts"

let studio: Studio | undefined
afterEach(async () => {
  await studio?.close()
  studio = undefined
})

/** An agent whose one tool returns `size` characters, then answers "summary". */
const reader = (size: number) => {
  const fetchPage = tool("fetch_page", {
    args: Schema.Struct({ url: Schema.String }),
    effect: "readOnly",
    run: () => `<p>${"lorem ipsum ".repeat(Math.ceil(size / 12)).slice(0, size)}</p>`
  })
  return agent("reader")
    .model(scriptedModel((request) => request.messages.at(-1)?.role === "user" ? toolCalls([{ name: "fetch_page", arguments: { url: "https://example.com" } }]) : text("summary")))
    .tools({ fetch_page: fetchPage })
}

/** Runs `reader(size)` with studio hooks; answers the hooks and the studio's stored run. */
const runWatched = async (target: Studio, size: number, options: StudioHooksOptions = {}) => {
  // A generous timeout per batch: a loaded machine (a full test run) may take seconds for megabytes.
  const hooks = studioHooks({ url: target.url, timeoutMs: 30_000, ...options })
  expect(await reader(size).onEvent(hooks).run("summarise example.com")).toBe("summary")
  await hooks.flush()
  const [summary] = await eventually(async () => {
    const runs = (await call(target, "GET", "/api/runs")).body
    return runs.length > 0 && runs[0].status === "completed" ? runs : undefined
  })
  const detail = (await call(target, "GET", `/api/runs/${summary.runId}`)).body
  return { hooks, summary, detail, tags: detail.events.map((e: any) => e.event._tag) as Array<string> }
}

const allTags = ["RunStart", "SkillChosen", "Turn", "ModelCall", "ModelResponse", "ToolUse", "Turn", "ModelCall", "ModelResponse", "RunEnd"]

describe("studioHooks and events larger than a body", () => {
  it("a run with a 4.8 MB tool result reaches the studio whole: no batch holds more than the studio takes", async () => {
    studio = await startStudio({ port: 0 })
    const { hooks, summary, detail, tags } = await runWatched(studio, 4_800_000)
    expect(hooks.dropped).toBe(0)
    expect(summary).toMatchObject({ agent: "reader", source: "ingest", status: "completed" })
    expect(tags).toEqual(allTags)
    // Each event alone fits the default 8 MiB: nothing is cut.
    const toolUse = detail.events.find((e: any) => e.event._tag === "ToolUse").event
    expect(JSON.stringify(toolUse).length).toBeGreaterThan(4_800_000)
    expect(toolUse.trimmed).toBeUndefined()
  }, 60_000)

  it("an event larger than the body limit alone is sent with its long strings cut, saying how much was left out", async () => {
    studio = await startStudio({ port: 0 })
    const { hooks, detail, tags } = await runWatched(studio, 1_000_000, { maxBodyBytes: 64 * 1024 })
    expect(hooks.dropped).toBe(0)
    expect(tags).toEqual(allTags)
    const toolUse = detail.events.find((e: any) => e.event._tag === "ToolUse").event
    expect(toolUse.trimmed).toBe(true)
    expect(JSON.stringify(toolUse).length).toBeLessThanOrEqual(64 * 1024)
    expect(JSON.stringify(toolUse)).toMatch(/more characters left out: the event was too large to send to the studio/)
    expect(detail.events.find((e: any) => e.event._tag === "RunEnd").event.outcome).toMatchObject({ _tag: "Success", output: "summary" })
  }, 60_000)

  it("a studio that takes less than the hooks' limit (413): the batch goes again in halves, a lone event cut further", async () => {
    studio = await startStudio({ port: 0, maxBodyBytes: 16 * 1024 })
    const { hooks, summary, tags } = await runWatched(studio, 200_000)
    expect(hooks.dropped).toBe(0)
    expect(summary.status).toBe("completed")
    expect(tags).toEqual(allTags)
  }, 60_000)
})

describe("fitEventJson", () => {
  const json = fc.jsonValue({ maxDepth: 4 })
  const event = fc.record({
    _tag: fc.constantFrom("RunStart", "ToolUse", "ModelCall", "RunEnd"),
    runId: fc.string({ maxLength: 40 }),
    agent: fc.string({ maxLength: 40 }),
    payload: fc.oneof(json, fc.string({ unit: "binary", minLength: 2000, maxLength: 20_000 }), fc.array(fc.string({ unit: "grapheme", maxLength: 3000 }), { maxLength: 30 })),
    more: fc.dictionary(fc.string({ maxLength: 10 }), fc.oneof(json, fc.string({ maxLength: 5000 })), { maxKeys: 200 })
  })

  it("keeps an event that fits as it is, and makes any other fit, its tag and run id intact", () => {
    fc.assert(
      fc.property(event, fc.integer({ min: 1024, max: 32 * 1024 }), (given, maxBytes) => {
        const out = fitEventJson(given, maxBytes)
        const whole = JSON.stringify(given)
        if (Buffer.byteLength(whole) <= maxBytes) expect(out).toBe(whole)
        expect(Buffer.byteLength(out)).toBeLessThanOrEqual(maxBytes)
        const parsed = JSON.parse(out)
        expect(parsed._tag).toBe(given._tag)
        expect(parsed.runId).toBe(given.runId)
      }),
      { numRuns: 300 }
    )
  })

  it("counts UTF-8 bytes as the wire does, for any string JSON.stringify writes", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      const written = JSON.stringify(s)
      expect(utf8Bytes(written)).toBe(Buffer.byteLength(written))
    }), { numRuns: 500 })
  })
})

describe("studioHooks refuses a malformed configuration at once", () => {
  it.each(["localhost:4111", "127.0.0.1:4111/?token=secret", "http://[::1", "ftp://127.0.0.1:4111/"])("url %s: an AgentConfigError naming the option and what a valid value looks like", (url) => {
    let thrown: unknown
    try {
      studioHooks({ url })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(AgentConfigError)
    const message = (thrown as AgentConfigError).message
    expect(message).toContain("studioHooks({ url })")
    expect(message).toContain("http://127.0.0.1:4111/?token=")
    expect(message).not.toContain("secret")
  })

  it("EFFECT_AGENT_STUDIO_URL malformed: the error names the variable", () => {
    const before = process.env.EFFECT_AGENT_STUDIO_URL
    process.env.EFFECT_AGENT_STUDIO_URL = "localhost:4111"
    try {
      expect(() => studioHooks()).toThrow(/Invalid EFFECT_AGENT_STUDIO_URL: must be the URL the studio printed/)
    } finally {
      if (before === undefined) delete process.env.EFFECT_AGENT_STUDIO_URL
      else process.env.EFFECT_AGENT_STUDIO_URL = before
    }
  })

  it.each([
    { maxQueue: 0 },
    { flushMs: Number.NaN },
    { timeoutMs: -1 },
    { maxBodyBytes: 100 },
    { maxBodyBytes: Number.POSITIVE_INFINITY }
  ])("an option out of range (%o) is refused naming it", (options) => {
    const name = Object.keys(options)[0]!
    expect(() => studioHooks({ url: "http://127.0.0.1:4111/", ...options })).toThrow(new RegExp(`studioHooks\\(\\{ ${name} \\}\\): must be`))
  })

  it("a valid URL with nobody listening never fails the run", async () => {
    const hooks = studioHooks({ url: "http://127.0.0.1:9/?token=x", timeoutMs: 500 })
    expect(await reader(10).onEvent(hooks).run("go")).toBe("summary")
    await hooks.flush()
    expect(hooks.dropped).toBe(10)
  })
})

describe("studioHooks' bounded queue", () => {
  it("keeps the newest maxQueue events while none is sent, drops the oldest one by one and counts them", async () => {
    const { createServer } = await import("node:http")
    const bodies: Array<{ readonly events: ReadonlyArray<{ readonly event: { readonly _tag: string } }> }> = []
    const server = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        bodies.push(JSON.parse(body))
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as { port: number }).port
      // No batch before the run ends (`flushMs` a minute): the queue holds what the bound lets it.
      const hooks = studioHooks({ url: `http://127.0.0.1:${port}/?token=t`, maxQueue: 3, flushMs: 60_000 })
      expect(await reader(10).onEvent(hooks).run("go")).toBe("summary")
      await hooks.flush()
      expect(bodies.flatMap((b) => b.events.map((e) => e.event._tag))).toEqual(allTags.slice(-3))
      expect(hooks.dropped).toBe(allTags.length - 3)
      // A second run: the queue was emptied by the flush, its bound starts again.
      expect(await reader(10).onEvent(hooks).run("go")).toBe("summary")
      await hooks.flush()
      expect(bodies.flatMap((b) => b.events.map((e) => e.event._tag))).toEqual([...allTags.slice(-3), ...allTags.slice(-3)])
      expect(hooks.dropped).toBe(2 * (allTags.length - 3))
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
