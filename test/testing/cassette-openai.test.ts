/**
 * A real provider over the wire: `openai(...)` against a loopback Chat Completions server, recorded to
 * a cassette file (plain and streamed calls, an HTTP error), then replayed with the server gone. The
 * file holds neither the API key nor any header.
 */
import { Effect, Schema, Stream } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { agent, openai, tool } from "../../src/index.ts"
import { recordCassette, replayCassette } from "../../src/testing/index.ts"
import { openAiChunk, openAiError, openAiText, openAiToolCalls, openAiUsageChunk, type Reply, sseBody, tear, useLoopback } from "../providers/loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

const apiKey = "sk-proj-loopbackSECRET0123456789"
const add = tool("add", { description: "Add two numbers", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const calculator = agent("calc").prompt("You are a calculator.").tools({ add })
const fast = { retry: { times: 1, base: "5 millis" }, timeout: "5 seconds", idleTimeout: "5 seconds" } as const

const sse = (chunks: ReadonlyArray<unknown>): Reply => ({ pieces: tear(sseBody(chunks), [64, 17, 200]), contentType: "text/event-stream", gapMs: 2 })

describe("openai(...) recorded over loopback, replayed without it", () => {
  const serve = useLoopback()
  const fileIn = () => join(mkdtempSync(join(tmpdir(), "cassette-openai-")), "calc.json")

  it("a plain run: same output, no server, no key or headers in the file", async () => {
    const server = await serve([openAiToolCalls([{ id: "call_1", name: "add", arguments: '{"a":3,"b":5}' }]), openAiText("8")])
    const file = fileIn()
    const live = recordCassette(openai("gpt-4o-mini", { baseURL: `${server.url}/v1`, apiKey, ...fast }), { cassette: file })
    expect(await calculator.model(live).run("3 + 5?")).toBe("8")
    expect(server.requests).toHaveLength(2)
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${apiKey}`)
    await server.close()

    const written = readFileSync(file, "utf8")
    expect(written).not.toContain(apiKey)
    expect(written.toLowerCase()).not.toContain("authorization")
    expect(JSON.parse(written)).toMatchObject({ version: 1, metadata: { provider: "openai", model: "gpt-4o-mini" } })
    const replay = replayCassette(file)
    expect(replay.metadata).toMatchObject({ provider: "openai", model: "gpt-4o-mini" })
    expect(await calculator.model(replay).run("3 + 5?")).toBe("8")
    expect(replay.unused()).toEqual([])
  })

  it("a streamed run: the same deltas from the recorded SSE, with usage", async () => {
    const server = await serve([
      sse([
        openAiChunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "add", arguments: "" } }] }),
        openAiChunk({ tool_calls: [{ index: 0, function: { arguments: '{"a": 3' } }] }),
        openAiChunk({ tool_calls: [{ index: 0, function: { arguments: ', "b": 5}' } }] }),
        openAiChunk({}, "tool_calls"),
        openAiUsageChunk(40, 12)
      ]),
      sse([openAiChunk({ role: "assistant", content: "" }), openAiChunk({ content: "It is " }), openAiChunk({ content: "8." }), openAiChunk({}, "stop"), openAiUsageChunk(50, 3)])
    ])
    const file = fileIn()
    const deltas = (model: ReturnType<typeof openai> | ReturnType<typeof replayCassette>) =>
      Effect.runPromise(Stream.runCollect(calculator.model(model).runStream("3 + 5?"))).then((events) =>
        events.flatMap((e) => (e._tag === "TextDelta" || e._tag === "ToolCallDelta" ? [e.delta] : e._tag === "ModelResponse" ? [JSON.stringify(e.response.usage)] : []))
      )
    const live = await deltas(recordCassette(openai("gpt-4o-mini", { baseURL: `${server.url}/v1`, apiKey, ...fast }), { cassette: file }))
    await server.close()
    expect(live.join("")).toContain("It is 8.")
    expect(await deltas(replayCassette(file))).toEqual(live)
    const recorded = JSON.parse(readFileSync(file, "utf8"))
    expect(recorded.interactions.map((i: { call: string }) => i.call)).toEqual(["stream", "stream"])
    expect(readFileSync(file, "utf8")).not.toContain(apiKey)
  })

  it("an HTTP error echoing the key is recorded redacted and replayed as the same ModelError", async () => {
    const server = await serve([openAiError(401, `Incorrect API key provided: ${apiKey}. You can find your API key at https://platform.openai.com.`, "invalid_request_error")])
    const file = fileIn()
    const live = await calculator.model(recordCassette(openai("gpt-4o-mini", { baseURL: `${server.url}/v1`, apiKey, ...fast }), { cassette: file })).run("3 + 5?").catch((e: unknown) => e)
    await server.close()
    expect(readFileSync(file, "utf8")).not.toContain(apiKey)
    const replayed = await calculator.model(replayCassette(file)).run("3 + 5?").catch((e: unknown) => e)
    expect(replayed).toMatchObject({ _tag: "ModelError", status: 401, retryable: (live as { retryable?: boolean }).retryable })
    expect((replayed as Error).message).toMatch(/Incorrect API key provided: \[redacted:[0-9a-f]{8}\]/)
  })
})
