import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Recovery, text, tool, toolCalls, unsafeNoSchema } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const Convert = Schema.Struct({ unit: Schema.Literals(["celsius", "kelvin"]), value: Schema.Finite })

describe("a tool owns its argument codec", () => {
  const repairing = tool("convert", { args: Convert, repair: true, run: () => "ok" })
  const plain = tool("convert", { args: Convert, run: () => "ok" })

  it("decodes JSON text and values alike", () => {
    expect(plain.codec.decode('{"unit":"kelvin","value":1}')).toEqual({ _tag: "Valid", args: { unit: "kelvin", value: 1 }, corrections: [] })
    expect(plain.codec.decode({ unit: "kelvin", value: 1 })).toEqual({ _tag: "Valid", args: { unit: "kelvin", value: 1 }, corrections: [] })
  })

  it("reports issues with the parsed value, or the text when it is not JSON", () => {
    expect(plain.codec.decode('{"unit":"Kelvin","value":1}')).toMatchObject({ _tag: "Invalid", value: { unit: "Kelvin", value: 1 } })
    expect(plain.codec.decode("{unit")).toMatchObject({ _tag: "Invalid", value: "{unit" })
  })

  it("repairs only when the tool opted in, reports the corrections, and never when told not to", () => {
    expect(repairing.codec.decode('{"unit":"Kelvin","value":"1"}')).toEqual({
      _tag: "Valid",
      args: { unit: "kelvin", value: 1 },
      corrections: [
        { path: ["unit"], kind: "literal", from: "Kelvin", to: "kelvin" },
        { path: ["value"], kind: "numeric-string", from: "1", to: 1 }
      ]
    })
    expect(repairing.codec.decode({ unit: "Kelvin", value: 1 }, { repair: false })._tag).toBe("Invalid")
    expect(plain.codec.decode('{"unit":"Kelvin","value":1}')._tag).toBe("Invalid")
    expect(Result.isFailure(repairing.codec.check({ unit: "Kelvin", value: 1 }))).toBe(true)
  })

  it("gives unsafe tools the parsed JSON, unvalidated", () => {
    const raw = tool("raw", { args: unsafeNoSchema({ mode: "full" }), run: (args) => args })
    expect(raw.codec.decode('{"any":1}')).toEqual({ _tag: "Valid", args: { any: 1 }, corrections: [] })
    expect(raw.codec.validated).toBe(false)
  })
})

describe("one meaning of fixed", () => {
  it("a fix from the executionError handler that does not decode goes back to that handler, then InvalidToolArgs", async () => {
    const attempts: Array<{ readonly attempt: number; readonly cause: unknown }> = []
    const runs: Array<unknown> = []
    const t = tool("convert", {
      args: Convert,
      run: (args) => {
        runs.push(args)
        throw new Error("down")
      },
      recover: {
        executionError: ({ attempt, cause }) => {
          attempts.push({ attempt, cause })
          return attempt === 1 ? Recovery.fixed({ unit: "rankine", value: 1 }) : Recovery.fixed({ unit: "celsius", value: 2 })
        }
      }
    })
    const model = scriptedModel([toolCalls([{ id: "1", name: "convert", arguments: { unit: "kelvin", value: 1 } }]), text("done")])
    const error = failureOf(await runExit(agent("a").model(model).tools({ convert: t }).recover({ maxRepairSteps: 2 }).runEffect("x")))
    // Fix 1 did not decode: the same handler was asked again (about an InvalidToolArgs), fix 2 ran and failed,
    // and a third fix was beyond maxRepairSteps.
    expect(runs).toEqual([{ unit: "kelvin", value: 1 }, { unit: "celsius", value: 2 }])
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3])
    expect(attempts[1]!.cause).toMatchObject({ _tag: "InvalidToolArgs", raw: { unit: "rankine", value: 1 } })
    expect(error).toMatchObject({ _tag: "ToolFailed", tool: "convert" })
  })

  it("a fix from the invalidArgs handler that decodes runs the tool, and its failure goes to executionError", async () => {
    const seen: Array<string> = []
    const t = tool("convert", {
      args: Convert,
      run: () => {
        throw new Error("down")
      },
      recover: {
        invalidArgs: () => {
          seen.push("invalidArgs")
          return Recovery.fixed({ unit: "celsius", value: 1 })
        },
        executionError: () => {
          seen.push("executionError")
          return Recovery.substitute("cached")
        }
      }
    })
    const model = scriptedModel([toolCalls([{ id: "1", name: "convert", arguments: { unit: "K", value: 1 } }]), text("done")])
    expect(await agent("a").model(model).tools({ convert: t }).run("x")).toBe("done")
    expect(seen).toEqual(["invalidArgs", "executionError"])
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "tool", content: "cached" })
  })
})
