import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type ArgsCorrection, closestLiteral, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const Convert = Schema.Struct({
  unit: Schema.Literals(["celsius", "fahrenheit", "kelvin"]),
  value: Schema.Finite,
  options: Schema.optionalKey(Schema.Struct({ precision: Schema.Int }))
})

const converter = (repair: boolean) => {
  const seen: Array<unknown> = []
  const convert = tool("convert", {
    args: Convert,
    repair,
    run: (args) => {
      seen.push(args)
      return "done"
    }
  })
  return { convert, seen }
}

const runWith = async (args: unknown, repair = true) => {
  const { convert, seen } = converter(repair)
  const model = scriptedModel([toolCalls([{ id: "1", name: "convert", arguments: args }]), text("end")])
  const repaired: Array<ReadonlyArray<ArgsCorrection>> = []
  await agent("a")
    .model(model)
    .tools({ convert })
    .onArgsRepaired((e) => {
      repaired.push(e.corrections)
    })
    .run("x")
  return { seen, repaired, feedback: model.requests[1]!.messages.at(-1)!.content }
}

describe("argument repair", () => {
  it.each([
    ["Celsius", "celsius"],
    ["FAHRENHEIT", "fahrenheit"],
    ["kelv", "kelvin"],
    ["degrees celsius", "celsius"],
    ["farenheit", "fahrenheit"],
    ["celcius", "celsius"]
  ])("corrects the literal %s to %s and records it", async (sent, expected) => {
    const { seen, repaired } = await runWith({ unit: sent, value: 20 })
    expect(seen).toEqual([{ unit: expected, value: 20 }])
    expect(repaired).toEqual([[{ path: ["unit"], kind: "literal", from: sent, to: expected }]])
  })

  it("turns numeric strings into numbers, and JSON strings into objects, at any depth", async () => {
    const { seen, repaired } = await runWith({ unit: "kelvin", value: " 12.5", options: '{"precision":"2"}' })
    expect(seen).toEqual([{ unit: "kelvin", value: 12.5, options: { precision: 2 } }])
    expect(repaired[0]!.map((c) => c.kind)).toEqual(["numeric-string", "json-string", "numeric-string"])
  })

  it("parses arguments encoded twice (JSON inside a JSON string)", async () => {
    const { seen } = await runWith(JSON.stringify(JSON.stringify({ unit: "celsius", value: 1 })))
    expect(seen).toEqual([{ unit: "celsius", value: 1 }])
  })

  it("leaves values with no clear match as invalid arguments, and the tool does not run", async () => {
    const { seen, repaired, feedback } = await runWith({ unit: "rankine scale", value: 1 })
    expect(seen).toEqual([])
    expect(repaired).toEqual([])
    expect(feedback).toContain("Invalid arguments")
  })

  it("does nothing for tools that did not opt in", async () => {
    const { seen, feedback } = await runWith({ unit: "Celsius", value: 1 }, false)
    expect(seen).toEqual([])
    expect(feedback).toContain("Invalid arguments")
  })

  it("never lets a repaired value through that still fails the Schema", async () => {
    const { seen } = await runWith({ unit: "Celsius", value: "not a number" })
    expect(seen).toEqual([])
  })

  it("picks the unique closest literal and refuses ambiguous matches", () => {
    expect(closestLiteral("cel", ["celsius", "cell"])).toBe("cell")
    expect(closestLiteral("cel", ["cela", "celb"])).toBeUndefined()
    expect(closestLiteral("cat", ["bat", "hat"])).toBeUndefined()
    expect(closestLiteral("", ["a"])).toBeUndefined()
  })
})
