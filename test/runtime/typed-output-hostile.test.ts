/**
 * Typed output under a hostile model: whatever it answers (deeply nested JSON, fences, prose, arrays,
 * extra and `__proto__` keys, non-finite numbers), a typed run ends with a value the Schema accepted or
 * with `OutputInvalid`, never with a thrown defect; and the JSON Schema the model is given carries the
 * definitions its `$ref`s point to.
 */
import { fc, test } from "@fast-check/vitest"
import { Schema } from "effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { agent, isAgentError, OutputInvalid, session, text, tool, toolCalls } from "../../src/index.ts"
import { outputContract } from "../../src/runtime/output-contract.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { chainOf, Link } from "../support/backtracking-schema.ts"

interface Tree {
  readonly label: string
  readonly children: ReadonlyArray<Tree>
}
const Tree: Schema.Codec<Tree> = Schema.Struct({
  label: Schema.String,
  children: Schema.Array(Schema.suspend((): Schema.Codec<Tree> => Tree))
})
const nested = (depth: number): string => `{"label":"x","children":[`.repeat(depth) + `{"label":"leaf","children":[]}` + "]}".repeat(depth)

describe("a typed answer nested deeper than the Schema's decoder can go", () => {
  it("is refused like any answer that does not decode: a correction, then OutputInvalid", async () => {
    const model = scriptedModel([text(nested(2_000)), text(nested(2_000))])
    const error = failureOf(await runExit(agent("tree", { output: Tree }).model(model).budget({ maxTurns: 2 }).runEffect("x")))
    expect(error).toBeInstanceOf(OutputInvalid)
    expect((error as OutputInvalid).issues).toContain("could not be checked")
    // The first answer went back to the model with the report.
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "user" })
  })

  it("is refused as a submit call too", async () => {
    const Wrapped = Schema.Struct({ tree: Tree })
    const model = scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: `{"tree":${nested(2_000)}}` }])])
    const error = failureOf(await runExit(agent("tree", { output: Wrapped }).model(model).budget({ maxTurns: 1 }).runEffect("x")))
    expect(error).toBeInstanceOf(OutputInvalid)
  })

  it("still decodes at an ordinary depth", async () => {
    const model = scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: nested(20) }])])
    const tree = await agent("tree", { output: Tree }).model(model).run("x")
    expect(tree.label).toBe("x")
  })
})

describe("a typed answer whose check would try the Schema's unions exponentially many times", () => {
  // Both members read `next` before the field that tells them apart: 2^depth tries for Effect's decoder.
  const Answer = Schema.Struct({ chain: Link })
  const chain = (depth: number): string => JSON.stringify({ chain: chainOf(depth) })

  it("is refused at once with a reason (40 levels: the process would be held for years), then a right answer is taken", async () => {
    const model = scriptedModel([text(chain(40)), text(chain(3))])
    const answer = await agent("chain", { output: Answer }).model(model).budget({ maxTurns: 2 }).run("x")
    expect(answer.chain.b).toBe("x")
    expect(JSON.stringify(model.requests[1]!.messages.at(-1))).toContain("alternatives (unions)")
  })
})

describe("the JSON Schema given for the answer", () => {
  const refsResolve = (schema: unknown): boolean => {
    const defs = ((schema as { $defs?: Record<string, unknown> }).$defs ?? {}) as Record<string, unknown>
    const refs: Array<string> = []
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk)
      if (typeof node !== "object" || node === null) return
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string") refs.push(value)
        else walk(value)
      }
    }
    walk(schema)
    return refs.every((ref) => ref.startsWith("#/$defs/") && ref.slice("#/$defs/".length) in defs)
  }

  it("carries the definitions of a Schema with an identifier (the submit tool's parameters)", async () => {
    const Address = Schema.Struct({ city: Schema.String }).annotate({ identifier: "Address" })
    const Contact = Schema.Struct({ home: Address, work: Address })
    const model = scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: { home: { city: "A" }, work: { city: "B" } } }])])
    await agent("c", { output: Contact }).model(model).run("x")
    const submit = model.requests[0]!.tools.find((t) => t.name === "submit")!
    expect(submit.parameters).toHaveProperty("$defs.Address")
    expect(refsResolve(submit.parameters)).toBe(true)
  })

  it("gives a recursive object Schema a submit tool, whose parameters are an object with its definitions", async () => {
    const model = scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: nested(2) }])])
    expect((await agent("tree", { output: Tree }).model(model).run("x")).children).toHaveLength(1)
    const submit = model.requests[0]!.tools.find((t) => t.name === "submit")
    expect(submit?.parameters).toMatchObject({ type: "object" })
    expect(refsResolve(submit!.parameters)).toBe(true)
  })

  it("carries them in the native response format too", () => {
    const Address = Schema.Struct({ city: Schema.String }).annotate({ identifier: "Address" })
    const contract = outputContract(Schema.Struct({ home: Address }).annotate({ "effect-agent-dsl/outputStrategy": "native" } as never))
    expect(contract.responseFormat?.schema).toHaveProperty("$defs.Address")
    expect(refsResolve(contract.responseFormat!.schema)).toBe(true)
  })
})

describe("an output Schema with a key named like a member of Object.prototype", () => {
  it("decodes an answer without that optional key (read from the answer's own keys only)", async () => {
    const Reply = Schema.Struct({ answer: Schema.String, constructor: Schema.optionalKey(Schema.String) })
    const model = scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: { answer: "42" } }])])
    expect(await agent("a", { output: Reply }).model(model).run("x")).toEqual({ answer: "42" })
  })
})

// Hostile final texts: every typed run ends with a value the Schema accepts, or with OutputInvalid.
const Answer = Schema.Struct({ n: Schema.Finite, tags: Schema.Array(Schema.String) })
const isAnswer = Schema.is(Answer)
const arbJsonish: fc.Arbitrary<string> = fc.oneof(
  fc.json(),
  fc.record({ n: fc.oneof(fc.double(), fc.constantFrom("NaN", "Infinity", "-Infinity", "1e999")), tags: fc.array(fc.string()) }).map((v) => JSON.stringify(v)),
  fc.constantFrom(`{"n":1,"tags":[],"__proto__":{"polluted":true}}`, `{"n":1,"tags":[],"extra":1}`, `[{"n":1,"tags":[]}]`, `{"n":NaN,"tags":[]}`, `{"n":1,"tags":[],}`),
  fc.integer({ min: 1, max: 3_000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
  fc.integer({ min: 1, max: 3_000 }).map((depth) => `{"n":1,"tags":` + "[".repeat(depth) + "]".repeat(depth) + "}")
)
const arbHostileText: fc.Arbitrary<string> = fc.tuple(
  arbJsonish,
  fc.constantFrom((j: string) => j, (j: string) => "```json\n" + j + "\n```", (j: string) => "```json\n" + j + "\n```\nHope this helps!", (j: string) => `Answer [v2]: ${j} -- done`, (j: string) => j.slice(0, Math.floor(j.length / 2)))
).map(([json, wrap]) => wrap(json))

describe("hostile final texts", () => {
  test.prop([fc.array(arbHostileText, { minLength: 1, maxLength: 3 })], { numRuns: 150 })(
    "end with a value the Schema accepts, or with OutputInvalid, within maxTurns",
    async (texts) => {
      const model = scriptedModel(texts.map((t) => text(t)))
      const exit = await runExit(agent("typed", { output: Answer }).model(model).budget({ maxTurns: texts.length }).runEffect("x"))
      expect(model.requests.length).toBeLessThanOrEqual(texts.length)
      if (exit._tag === "Success") {
        expect(isAnswer(exit.value)).toBe(true)
        expect(Object.getPrototypeOf(exit.value)).toBe(Object.prototype)
        expect(Object.keys(exit.value as object).sort()).toEqual(["n", "tags"])
      } else {
        const error = failureOf(exit)
        expect(isAgentError(error)).toBe(true)
        expect(error).toBeInstanceOf(OutputInvalid)
      }
    }
  )

  const arbTreeText = fc.integer({ min: 0, max: 3_000 }).map(nested)
  test.prop([fc.oneof(arbHostileText, arbTreeText)], { numRuns: 300 })("the decoder answers a Result, never throws, for a flat or a recursive Schema", (answer) => {
    for (const schema of [Answer, Tree] as const) {
      expect(Result.isResult(outputContract(schema).decodeText(answer))).toBe(true)
      expect(Result.isResult(outputContract(schema).decodeSubmission(answer))).toBe(true)
    }
  })
})

describe("a submit call followed by other calls in its turn", () => {
  it("ends the run with its answer; the later calls do not run and each gets a result, so a session's next run sends a whole transcript", async () => {
    const deleted: Array<unknown> = []
    const del = tool("del", { args: Schema.Struct({ id: Schema.String }), run: ({ id }) => void deleted.push(id) })
    const model = scriptedModel([
      toolCalls([{ id: "s", name: "submit", arguments: { a: 1 } }, { id: "d", name: "del", arguments: { id: "x" } }]),
      toolCalls([{ id: "s2", name: "submit", arguments: { a: 2 } }])
    ])
    const chat = session(agent("t", { output: Schema.Struct({ a: Schema.Finite }) }).model(model).tools({ del }), "s-1")
    expect(await chat.send("first")).toEqual({ a: 1 })
    expect(deleted).toEqual([])
    await chat.send("second")
    const sent = model.requests[1]!.messages
    const calls = sent.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : []))
    const answered = sent.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []))
    expect(calls).toEqual(["s", "d"])
    expect(answered).toEqual(["s", "d"])
    expect(sent.find((m) => m.role === "tool" && m.toolCallId === "d")?.content).toMatch(/not run/)
  })
})
