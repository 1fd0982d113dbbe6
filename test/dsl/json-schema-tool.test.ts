import { fc, it as fcIt } from "@fast-check/vitest"
import { Result } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { AgentConfigError, agent, type InvalidArgsContext, Recovery, text, type Tool, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit, spy } from "../fixtures.ts"

const Weather = {
  type: "object",
  description: "Weather for a place",
  $defs: {
    Place: {
      type: "object",
      properties: { city: { type: "string", minLength: 1 }, country: { type: "string", pattern: "^[A-Z]{2}$" } },
      required: ["city"],
      additionalProperties: false
    }
  },
  properties: {
    place: { $ref: "#/$defs/Place" },
    unit: { enum: ["celsius", "fahrenheit"], description: "temperature unit" },
    days: { type: "integer", minimum: 1, maximum: 7 },
    hours: { type: "array", items: { type: "integer", minimum: 0, maximum: 23 }, maxItems: 3 }
  },
  required: ["place", "unit"],
  additionalProperties: false,
  examples: [{ place: { city: "Oslo" }, unit: "celsius" }]
} as const

/** Patterns whose meaning is the same in RE2 and ECMAScript (no `\\s`, no lookaround). */
const parityPatterns = ["^[a-z]+$", "\\d{2}-\\d", "^[A-Z][a-z]*$", "ab|9", "^\\w+@\\w+\\.\\w+$", "a?b", "^(a|b)+$", "[^a]Z", "^.{2,5}$", "^$", "\\.", "^[^@]+@", "😀", "é+", "^[0-9]*$"]

const call = (args: unknown) => toolCalls([{ id: "c1", name: "weather", arguments: args }])

const makeWeather = () => {
  const runs = spy()
  const weather = tool("weather", {
    description: "Forecast",
    parameters: Weather,
    run: (args: { readonly place: { readonly city: string }; readonly unit: string }) => {
      runs.record(args)
      return `sunny in ${args.place.city}`
    }
  })
  return { weather, runs }
}

describe("tools from a JSON Schema", () => {
  it("types args as unknown unless run's parameter is annotated", () => {
    const untyped = tool("u", { parameters: { type: "object" }, run: (args) => String(args) })
    expectTypeOf(untyped).toEqualTypeOf<Tool<"u", unknown, string>>()
    expectTypeOf(makeWeather().weather).toEqualTypeOf<Tool<"weather", { readonly place: { readonly city: string }; readonly unit: string }, string>>()
  })

  it("stores the schema verbatim and deep-frozen", () => {
    const document = structuredClone(Weather) as unknown as Record<string, unknown>
    const t = tool("weather", { parameters: document, run: () => "ok" })
    expect(t.definition.parameters).toEqual(Weather)
    expect(t.definition.parameters).not.toBe(document)
    expect(Object.isFrozen(t.definition.parameters)).toBe(true)
    expect(Object.isFrozen((t.definition.parameters.$defs as any).Place.properties.city)).toBe(true)
    ;(document.properties as any).unit = { type: "string" }
    expect((t.definition.parameters.properties as any).unit.enum).toEqual(["celsius", "fahrenheit"])
  })

  it("validates through local $defs/$ref, enum, integer bounds, arrays and closed objects", () => {
    const { weather } = makeWeather()
    const decode = weather.codec.check
    expect(Result.isSuccess(decode({ place: { city: "Oslo", country: "NO" }, unit: "celsius", days: 3, hours: [1, 2] }))).toBe(true)
    expect(Result.isSuccess(decode('{"place":{"city":"Oslo"},"unit":"fahrenheit"}'))).toBe(true)
    const refused = [
      { place: { city: "" }, unit: "celsius" },
      { place: { city: "Oslo", country: "norway" }, unit: "celsius" },
      { place: { city: "Oslo" }, unit: "kelvin" },
      { place: { city: "Oslo" }, unit: "celsius", days: 8 },
      { place: { city: "Oslo" }, unit: "celsius", days: 1.5 },
      { place: { city: "Oslo" }, unit: "celsius", hours: [1, 2, 3, 4] },
      { place: { city: "Oslo" }, unit: "celsius", hours: [24] },
      { place: { city: "Oslo" }, unit: "celsius", extra: true },
      { place: { city: "Oslo", extra: 1 }, unit: "celsius" },
      { unit: "celsius" },
      "not json"
    ]
    for (const args of refused) expect(Result.isFailure(decode(args)), JSON.stringify(args)).toBe(true)
  })

  it("sends the model readable issues with paths, and never runs the tool on them", async () => {
    const { weather, runs } = makeWeather()
    const model = scriptedModel([call({ place: { city: "Oslo", country: "norway" }, unit: "kelvin" }), text("done")])
    await agent("a").model(model).tools({ weather }).run("weather?")
    expect(runs.calls).toEqual([])
    const feedback = model.requests[1]!.messages.filter((m) => m.role === "tool").at(-1)!.content
    expect(feedback).toContain(`["place"]["country"]`)
    expect(feedback).toContain(`["unit"]`)
  })

  it("routes invalid arguments to recovery handlers exactly like Schema tools", async () => {
    const { weather, runs } = makeWeather()
    const seen: Array<InvalidArgsContext> = []
    const fixed = await agent("a")
      .model(scriptedModel([call({ place: { city: "Oslo" }, unit: "kelvin" }), text("done")]))
      .tools({ weather })
      .recover({
        invalidArgs: (context) => {
          seen.push(context)
          return Recovery.fixed({ place: { city: "Oslo" }, unit: "celsius" })
        }
      })
      .run("x")
    expect(fixed).toBe("done")
    expect(runs.calls).toEqual([{ place: { city: "Oslo" }, unit: "celsius" }])
    expect(seen[0]!.error).toContain("unit")
    const error = failureOf(
      await runExit(
        agent("a").model(scriptedModel([call({ unit: "celsius" })])).tools({ weather }).recover({ invalidArgs: () => Recovery.fail }).runEffect("x")
      )
    )
    expect(error._tag).toBe("InvalidToolArgs")
  })

  it("repairs near-misses when asked, guided by the compiled schema", async () => {
    const runs = spy()
    const t = tool("weather", { parameters: Weather, repair: true, run: (args) => runs.record(args) })
    await agent("a").model(scriptedModel([call({ place: { city: "Oslo" }, unit: "Celsius", days: "2" }), text("ok")])).tools({ weather: t }).run("x")
    expect(runs.calls).toEqual([{ place: { city: "Oslo" }, unit: "celsius", days: 2 }])
  })

  it("accepts draft-07 (definitions, tuple items) and `additionalProperties: true` pass-through", () => {
    const t = tool("d7", {
      parameters: {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        definitions: { Pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false } },
        properties: { pair: { $ref: "#/definitions/Pair" } },
        required: ["pair"],
        additionalProperties: true
      },
      run: (args) => args
    })
    const decode = t.codec.check
    expect(decode({ pair: ["a", 1], other: { deep: [1] } })).toEqual(Result.succeed({ pair: ["a", 1], other: { deep: [1] } }))
    expect(Result.isFailure(decode({ pair: [1, "a"] }))).toBe(true)
    expect(Result.isFailure(decode({ pair: ["a", 1, 2] }))).toBe(true)
  })

  it("refuses at registration what it cannot validate, with a clear reason", () => {
    const refuse = (parameters: Record<string, unknown>, reason: RegExp) => {
      try {
        tool("t", { parameters, run: () => "ok" })
      } catch (error) {
        expect(error).toBeInstanceOf(AgentConfigError)
        expect((error as AgentConfigError).message).toMatch(reason)
        return
      }
      throw new Error(`accepted ${JSON.stringify(parameters)}`)
    }
    refuse({ type: "object", properties: { p: { $ref: "https://example.com/p.json" } } }, /remote \$ref "https:\/\/example.com\/p.json" at #\/properties\/p is refused/)
    refuse({ type: "object", properties: { p: { not: { type: "string" } } } }, /cannot be validated: .*"not"/)
    refuse({ type: "object", if: { required: ["a"] }, then: { required: ["b"] } }, /cannot be validated: .*"if"/)
    refuse({ type: "object", properties: { c: { const: { a: 1 } } } }, /cannot be validated: .*primitive/)
    refuse({ type: "string" }, /object schema/)
    refuse({ $schema: "http://json-schema.org/draft-04/schema#", type: "object" }, /unsupported \$schema/)
  })

  it("checks a pattern in linear time (RE2): one that backtracks catastrophically refuses a hostile string at once", () => {
    const t = tool("m", { parameters: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } }, required: ["s"] }, run: () => "ok" })
    const started = performance.now()
    const refused = t.codec.check({ s: "a".repeat(25) + "!" }) // about 2.5 s in a backtracking engine
    expect(performance.now() - started).toBeLessThan(500)
    expect(Result.isFailure(refused)).toBe(true)
    expect(Result.isSuccess(t.codec.check({ s: "aaa" }))).toBe(true)
  })

  it("the keys of patternProperties and a propertyNames pattern run in linear time too", () => {
    const evil = "^(a+)+$"
    const hostile = "a".repeat(25) + "!" // about 2.5 s a match in a backtracking engine
    const keyed = tool("k", { parameters: { type: "object", patternProperties: { [evil]: { type: "string" } }, additionalProperties: false }, run: () => "ok" })
    const named = tool("n", { parameters: { type: "object", propertyNames: { pattern: evil } }, run: () => "ok" })
    const started = performance.now()
    expect(Result.isFailure(keyed.codec.check({ [hostile]: "x" }))).toBe(true)
    expect(Result.isFailure(named.codec.check({ [hostile]: "x" }))).toBe(true)
    expect(performance.now() - started).toBeLessThan(500)
    expect(Result.isSuccess(keyed.codec.check({ aaa: "x" }))).toBe(true)
  })

  fcIt.prop([fc.constantFrom(...parityPatterns), fc.array(fc.constantFrom("a", "b", "Z", "0", "9", "-", "@", ".", " ", "\n", "é", "😀", "_"), { maxLength: 12 }).map((cs) => cs.join(""))], { numRuns: 400 })(
    "a pattern RE2 runs accepts exactly the strings the ECMAScript RegExp accepts",
    (pattern, input) => {
      const t = tool("p", { parameters: { type: "object", properties: { s: { type: "string", pattern } }, required: ["s"] }, run: () => "ok" })
      expect(Result.isSuccess(t.codec.check({ s: input }))).toBe(new RegExp(pattern, "u").test(input))
    }
  )

  it("checks OpenAI strict-mode compatibility at registration", () => {
    const ok = tool("s", {
      strict: true,
      parameters: { type: "object", properties: { q: { type: ["string", "null"] } }, required: ["q"], additionalProperties: false },
      run: () => "ok"
    })
    expect(ok.definition.strict).toBe(true)
    expect(() =>
      tool("s", { strict: true, parameters: { type: "object", properties: { q: { type: "string" }, n: { type: "number" } }, required: ["q"] }, run: () => "ok" })
    ).toThrow(/strict mode:\n#: objects must set "additionalProperties": false\n#: every property must be required .*: n/)
    expect(() =>
      tool("s", {
        strict: true,
        parameters: { type: "object", properties: { o: { type: "object", properties: {}, allOf: [] } }, required: ["o"], additionalProperties: false },
        run: () => "ok"
      })
    ).toThrow(/#\/properties\/o: "allOf" is not supported/)
  })
})
