import { Effect, Fiber, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { AgentConfigError, tool, unsafeNoSchema } from "../../src/index.ts"
import { executeTool } from "../../src/dsl/tool.ts"

const run = () => "ok"

describe("tool parameters generated from the Schema", () => {
  it("keeps field descriptions and lists required fields", () => {
    const t = tool("add", {
      description: "Add two numbers",
      args: Schema.Struct({ a: Schema.Finite.annotate({ description: "left" }), b: Schema.Finite }),
      run
    })
    expect(t.definition).toEqual({
      type: "function",
      name: "add",
      description: "Add two numbers",
      parameters: {
        type: "object",
        properties: { a: { type: "number", description: "left" }, b: { type: "number" } },
        required: ["a", "b"],
        additionalProperties: false
      }
    })
  })

  it("leaves optional fields and fields with defaults out of required", () => {
    const t = tool("search", {
      args: Schema.Struct({
        query: Schema.String,
        limit: Schema.optionalKey(Schema.Finite),
        page: Schema.Finite.annotate({ description: "page number" }).pipe(Schema.withDecodingDefaultKey(Effect.succeed(1)))
      }),
      run
    })
    expect(t.definition.parameters.required).toEqual(["query"])
    expect(t.definition.parameters.properties).toMatchObject({
      limit: { type: "number" },
      page: { type: "number", description: "page number" }
    })
  })

  it("turns literal unions into enums", () => {
    const t = tool("convert", { args: Schema.Struct({ unit: Schema.Literals(["celsius", "fahrenheit"]) }), run })
    expect(t.definition.parameters.properties).toEqual({ unit: { type: "string", enum: ["celsius", "fahrenheit"] } })
  })

  it("describes nested structs and arrays", () => {
    const t = tool("order", {
      args: Schema.Struct({
        customer: Schema.Struct({ name: Schema.String, vip: Schema.Boolean }),
        items: Schema.Array(Schema.Struct({ sku: Schema.String, quantity: Schema.Int }))
      }),
      run
    })
    expect(t.definition.parameters.properties).toEqual({
      customer: {
        type: "object",
        properties: { name: { type: "string" }, vip: { type: "boolean" } },
        required: ["name", "vip"],
        additionalProperties: false
      },
      items: {
        type: "array",
        items: {
          type: "object",
          properties: {
            sku: { type: "string" },
            quantity: { type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }
          },
          required: ["sku", "quantity"],
          additionalProperties: false
        }
      }
    })
  })

  it("produces an OpenAI strict schema when asked: all keys required, optional ones nullable", () => {
    const t = tool("lookup", {
      args: Schema.Struct({ id: Schema.String, locale: Schema.optionalKey(Schema.String) }),
      strict: true,
      run
    })
    expect(t.definition.strict).toBe(true)
    expect(t.definition.parameters.required).toEqual(["id", "locale"])
    expect(t.definition.parameters.properties).toMatchObject({
      locale: { anyOf: [{ type: "string" }, { type: "null" }] }
    })
    // and null decodes back to an absent key
    expect(t.codec.check({ id: "x", locale: null })).toEqual(Result.succeed({ id: "x" }))
  })

  it("stores the definition frozen, so nothing can mutate the contract", () => {
    const t = tool("add", { args: Schema.Struct({ a: Schema.Finite }), run })
    expect(Object.isFrozen(t.definition)).toBe(true)
    expect(Object.isFrozen(t.definition.parameters)).toBe(true)
    expect(() => {
      ;(t.definition.parameters as { type: string }).type = "array"
    }).toThrow()
  })
})

describe("argument decoding", () => {
  const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
  const decode = (raw: unknown) => {
    return add.codec.check(raw)
  }

  it("accepts a JSON string or an object", () => {
    expect(decode('{"a":1,"b":2}')).toEqual(Result.succeed({ a: 1, b: 2 }))
    expect(decode({ a: 1, b: 2 })).toEqual(Result.succeed({ a: 1, b: 2 }))
  })

  it("reports every issue with its path, readably", () => {
    const result = decode({ a: "one", c: 3 })
    expect(Result.isFailure(result)).toBe(true)
    const report = Result.isFailure(result) ? result.failure : ""
    expect(report).toContain('Expected number')
    expect(report).toContain('["a"]')
    expect(report).toContain('["b"]')
    expect(report).toContain('["c"]')
  })

  it("reports invalid JSON", () => {
    const result = decode("{a: 1")
    expect(Result.isFailure(result) && result.failure).toContain("JSON")
  })

  it("treats an empty argument string as an empty object, for tools without arguments", () => {
    const none = tool("now", { args: Schema.Struct({}), run: () => 0 })
    expect(none.definition.parameters).toEqual({ type: "object", properties: {}, additionalProperties: false })
    expect(none.codec.check("")).toEqual(Result.succeed({}))
  })
})

describe("tool construction", () => {
  it("refuses a tool without a Schema", () => {
    expect(() => tool("raw", { run } as never)).toThrow(AgentConfigError)
    expect(() => tool("raw", { run } as never)).toThrow(/unsafeNoSchema/)
  })

  it("accepts an explicit unsafeNoSchema and records its mode", () => {
    const t = tool("raw", { args: unsafeNoSchema({ mode: "read-only" }), run: (args) => args })
    expect(t.codec).toMatchObject({ validated: false, unsafe: "read-only" })
    expect(t.definition.parameters).toEqual({ type: "object" })
  })

  it("refuses arguments that are not an object", () => {
    expect(() => tool("n", { args: Schema.Finite, run })).toThrow(/object Schema/)
  })

  it("refuses names a provider would reject", () => {
    expect(() => tool("has space", { args: Schema.Struct({}), run })).toThrow(AgentConfigError)
    expect(() => tool("", { args: Schema.Struct({}), run })).toThrow(AgentConfigError)
  })

  it("runs sync, Promise and Effect implementations alike", async () => {
    const args = Schema.Struct({ n: Schema.Finite })
    const tools = [
      tool("sync", { args, run: ({ n }) => n + 1 }),
      tool("async", { args, run: async ({ n }) => n + 1 }),
      tool("effect", { args, run: ({ n }) => Effect.succeed(n + 1) })
    ]
    for (const t of tools) expect(await Effect.runPromise(executeTool(t, { n: 1 }, "id"))).toBe(2)
  })

  it("hands the tool an abort signal that fires when the run is interrupted", async () => {
    let signal: AbortSignal | undefined
    const slow = tool("slow", {
      args: Schema.Struct({}),
      run: (_, context) => {
        signal = context.signal
        return new Promise<never>(() => {})
      }
    })
    const fiber = Effect.runFork(executeTool(slow, {}, "id"))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(signal?.aborted).toBe(false)
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(signal?.aborted).toBe(true)
  })
})
