import { execFileSync } from "node:child_process"
import { Effect, Exit, Fiber, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, Recovery, skill, text, type ToolErrorEvent, toolCalls } from "../../src/index.ts"
import { mapToolResult, McpError, mcpStdio, mcpTools } from "../../src/mcp/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { everythingEntry, everythingHttp, everythingStdio, startEverythingHttp } from "./everything-server.ts"

const call = (name: string, args: unknown, id = "c1") => toolCalls([{ id, name, arguments: args }])
const toolMessages = (model: ReturnType<typeof scriptedModel>) =>
  model.requests.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content)

/** Pids of this process's children running the everything server. */
const everythingChildren = (): Array<string> => {
  try {
    return execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" })
      .split("\n").filter((line) => line.includes(everythingEntry)).map((line) => line.trim().split(" ")[0]!)
  } catch {
    return []
  }
}

const eventually = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe("MCP client over stdio (server-everything)", { timeout: 20_000 }, () => {
  // One server for the tests that only call tools; the others start their own.
  let scope: Scope.Closeable
  let shared: Effect.Success<ReturnType<typeof loadShared>>
  const loadShared = () => mcpTools(everythingStdio(), { tools: ["echo", "get-sum", "get-structured-content", "gzip-file-as-resource"], untrustedOutput: false })
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    shared = await Effect.runPromise(loadShared().pipe(Scope.provide(scope)))
  }, 20_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("loads declared tools as namespaced, typed tools that skills use through handles", async () => {
    const model = scriptedModel([call("everything_get-sum", { a: 2, b: 3 }), call("everything_echo", { message: "hi" }, "c2"), text("done")])
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { tools } = yield* mcpTools(everythingStdio(), { tools: ["echo", "get-sum"] })
      expect(Object.keys(tools).sort()).toEqual(["everything_echo", "everything_get-sum"])
      expect(tools.everything_echo.name).toBe("everything_echo")
      expect(tools["everything_get-sum"].definition.parameters).toMatchObject({ properties: { a: { type: "number" } }, required: ["a", "b"] })
      const a = agent("calc").model(model).tools(tools).skills((t) => [skill("sum", "Add numbers").tools(t["everything_get-sum"], t.everything_echo)])
      return yield* a.runEffect("2+3?")
    })))
    expect(result).toBe("done")
    const [sum, echo] = toolMessages(model)
    expect(sum).toContain("The sum of 2 and 3 is 5.")
    expect(sum).toContain(`"trusted":false`)
    expect(echo).toContain("Echo: hi")
  })

  it("applies the skill's allowlist to server tools", async () => {
    const exit = await runExit(
      agent("a").model(scriptedModel([call("everything_get-sum", { a: 1, b: 1 })])).tools(shared.tools)
        .skills((t) => [skill("echo", "Repeat").tools(t.everything_echo)]).runEffect("x")
    )
    const error = failureOf(exit)
    expect(error._tag).toBe("ToolNotAllowed")
  })

  it("validates calls against the server's input schema before they leave the process", async () => {
    const model = scriptedModel([call("everything_echo", { message: 42 }), text("done")])
    await agent("a").model(model).tools(shared.tools).run("x")
    const [feedback] = toolMessages(model)
    expect(feedback).toContain(`["message"]`)
    expect(feedback).not.toContain("MCP error")
  })

  it("maps structuredContent, and isError results to execution errors routed to recovery", async () => {
    const model = scriptedModel([
      call("everything_get-structured-content", { location: "Chicago" }),
      call("everything_gzip-file-as-resource", { name: "x.gz", data: "http://127.0.0.1:9/nothing-here" }, "c2"),
      text("done")
    ])
    const errors: Array<ToolErrorEvent> = []
    await agent("a").model(model).tools(shared.tools).onToolError((e) => void errors.push(e)).run("x")
    const [structured, failed] = toolMessages(model)
    expect(JSON.parse(structured!)).toEqual({ temperature: expect.any(Number), conditions: expect.any(String), humidity: expect.any(Number) })
    expect(failed).toMatch(/error/i)
    expect(errors).toHaveLength(1)
    expect(errors[0]!.error).toBeInstanceOf(McpError)
    expect((errors[0]!.error as McpError).operation).toBe("call")
  })

  it("honours the call timeout: a slow tool fails as an execution error", async () => {
    const exit = await runExit(Effect.scoped(Effect.gen(function*() {
      const { tools } = yield* mcpTools(everythingStdio(), { tools: ["trigger-long-running-operation"], timeoutMs: 300 })
      return yield* agent("a").model(scriptedModel([call("everything_trigger-long-running-operation", { duration: 5, steps: 5 })]))
        .tools(tools).recover({ executionError: () => Recovery.fail }).runEffect("x")
    })))
    const error = failureOf(exit)
    expect(error._tag).toBe("ToolFailed")
    expect(String((error as { cause: unknown }).cause)).toMatch(/timed out|timeout/i)
  })

  it("stops a running call when the run is interrupted, and stops the server when the scope closes", async () => {
    let calling = false
    const before = new Set(everythingChildren())
    const started = Date.now()
    const fiber = Effect.runFork(Effect.scoped(Effect.gen(function*() {
      const { tools } = yield* mcpTools(everythingStdio(), { tools: ["trigger-long-running-operation"] })
      return yield* agent("a").model(scriptedModel([call("everything_trigger-long-running-operation", { duration: 10, steps: 10 }), text("done")]))
        .tools(tools).onModelResponse(() => void (calling = true)).runEffect("x")
    })))
    let pid = ""
    await eventually(() => {
      pid = everythingChildren().find((p) => !before.has(p)) ?? ""
      return pid !== ""
    })
    await eventually(() => calling)
    await new Promise((r) => setTimeout(r, 300))
    const interruptedAt = Date.now()
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(Date.now() - interruptedAt).toBeLessThan(4_000)
    expect(Date.now() - started).toBeLessThan(8_000)
    await eventually(() => !everythingChildren().includes(pid))
  })

  it("refuses declared tools the server does not offer, naming what it offers", async () => {
    const error = failureOf(await runExit(Effect.scoped(mcpTools(everythingStdio(), { tools: ["echo", "ehco"] }))))
    expect(error).toBeInstanceOf(McpError)
    expect(error.message).toMatch(/does not offer "ehco"; it offers: .*echo/)
  })

  it("follows tools/list_changed: tools registered after initialisation are listed and reported", async () => {
    const changes: Array<ReadonlyArray<string>> = []
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { connection } = yield* mcpTools(everythingStdio({ roots: [{ uri: "file:///tmp" }] }), { tools: ["echo"] })
      connection.onToolsChanged((tools) => changes.push(tools.map((t) => t.name)))
      yield* Effect.promise(() => eventually(() => connection.listed().some((t) => t.name === "get-roots-list")))
      // The server announces its conditional tools with tools/list_changed; a later change reaches listeners.
      const refreshed = yield* connection.refresh
      expect(refreshed.map((t) => t.name)).toContain("get-roots-list")
    })))
    expect(changes.at(-1)).toContain("get-roots-list")
  })

  it("fails to connect with McpError when the command does not start a server", async () => {
    const broken = mcpStdio("broken", { command: process.execPath, args: ["-e", "process.exit(3)"] })
    const error = failureOf(await runExit(Effect.scoped(mcpTools(broken))))
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).operation).toBe("connect")
  })
})

describe("MCP client over streamable HTTP (server-everything)", { timeout: 20_000 }, () => {
  let server: Awaited<ReturnType<typeof startEverythingHttp>>
  beforeAll(async () => {
    server = await startEverythingHttp()
  }, 20_000)
  afterAll(async () => {
    await server?.stop()
  })

  it("calls server tools through an agent and closes the session with the scope", async () => {
    const model = scriptedModel([call("everything_get-sum", { a: 20, b: 22 }), text("42")])
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { tools } = yield* mcpTools(everythingHttp(server.url), { tools: ["get-sum"] })
      return yield* agent("a").model(model).tools(tools).runEffect("x")
    })))
    expect(result).toBe("42")
    expect(toolMessages(model)[0]).toContain("The sum of 20 and 22 is 42.")
    await eventually(() => server.output().includes("Received session termination request"))
  })
})

describe("result mapping", () => {
  it("joins text parts, keeps structured content, summarises binary parts, and reports isError", () => {
    expect(mapToolResult({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] })).toEqual({ _tag: "Output", output: "a\nb" })
    expect(mapToolResult({ content: [{ type: "text", text: "{}" }], structuredContent: { x: 1 } })).toEqual({ _tag: "Output", output: { x: 1 } })
    expect(mapToolResult({ content: [{ type: "text", text: "see" }, { type: "image", data: "AAAA", mimeType: "image/png" }] })).toEqual({
      _tag: "Output",
      output: [{ type: "text", text: "see" }, { type: "image", mimeType: "image/png", bytes: 3 }]
    })
    expect(mapToolResult({ content: [{ type: "text", text: "boom" }], isError: true })).toEqual({ _tag: "ToolError", text: "boom" })
  })
})
