/**
 * Law of `strictResultDecoder` (the default decode first, the strict one when a key was dropped): for
 * any value, hostile ones included, it answers exactly what Schema's strict decode answers (the same
 * value with its keys in the same order, or the same report), over Schemas that take the fast path and
 * Schemas that cannot (transformations, declarations, recursion).
 */
import { fc, test } from "@fast-check/vitest"
import { Result, Schema, SchemaTransformation } from "effect"
import { describe, expect, it } from "vitest"
import { RunSnapshotSchema } from "../../src/dsl/run-snapshot.ts"
import { argsDecoder } from "../../src/dsl/tool-parameters.ts"
import { strictOptions, strictResultDecoder } from "../../src/internal/strict-decode.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

interface Tree {
  readonly name: string
  readonly children: ReadonlyArray<Tree>
}
const Tree: Schema.Codec<Tree> = Schema.Struct({ name: Schema.String, children: Schema.Array(Schema.suspend(() => Tree)) })

const Counted = Schema.Struct({ n: Schema.Finite, ok: Schema.optionalKey(Schema.Boolean) })

const schemas = {
  flat: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  nested: Schema.Struct({
    a: Schema.Finite,
    name: Schema.optionalKey(Schema.String),
    tags: Schema.optionalKey(Schema.Array(Schema.Literals(["x", "y"]))),
    inner: Schema.optionalKey(Schema.Struct({ n: Schema.Int, deeper: Schema.optional(Schema.Struct({ ok: Schema.Boolean })) }))
  }),
  // The strict decode refuses the first member when the value has `b`, and takes the second.
  union: Schema.Union([Schema.Struct({ a: Schema.Finite }), Schema.Struct({ a: Schema.Finite, b: Schema.String })]),
  tagged: Schema.Union([
    Schema.Struct({ kind: Schema.Literal("circle"), r: Schema.Finite }),
    Schema.Struct({ kind: Schema.Literal("square"), side: Schema.Finite })
  ]),
  record: Schema.Struct({ scores: Schema.Record(Schema.String, Schema.Int), a: Schema.optionalKey(Schema.Finite) }),
  tuple: Schema.Struct({ pair: Schema.Tuple([Schema.String, Schema.Struct({ a: Schema.Finite })]) }),
  unknown: Schema.Struct({ a: Schema.Finite, payload: Schema.Unknown }),
  // JSON inside (the snapshot's waiting calls' arguments, a child's snapshot): kept as it is.
  withJson: Schema.Struct({ a: Schema.Finite, payload: Schema.optionalKey(Schema.Json), calls: Schema.Array(Schema.Struct({ id: Schema.String, args: Schema.Json })) }),
  // Not on the fast path: a transformation, a declaration, recursion. `rebuilt` adds a key its source
  // does not know: a value with an excess `b` keeps a `b` (the transformation's) after a default decode.
  rebuilt: Schema.Struct({ a: Schema.Finite }).pipe(Schema.decodeTo(
    Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
    SchemaTransformation.transform({ decode: (from: { readonly a: number }) => ({ ...from, b: 0 }), encode: ({ a }: { readonly a: number }) => ({ a }) })
  )),
  // Index signatures that also cover a property's key, or each other's (Effect decodes such a key with
  // both and keeps one result): an excess key inside the discarded one is still refused by the strict decode.
  overlapping: Schema.StructWithRest(Schema.Struct({ a: Counted }), [Schema.Record(Schema.String, Schema.Struct({ n: Schema.Finite }))]),
  twoRecords: Schema.StructWithRest(Schema.Struct({}), [Schema.Record(Schema.String, Schema.Struct({ n: Schema.Finite })), Schema.Record(Schema.String, Schema.Json)]),
  transformed: Schema.toCodecJson(Schema.Struct({ at: Schema.Date, a: Schema.Finite })),
  json: Schema.Struct({ a: Schema.Finite, payload: Schema.Json }),
  tree: Tree
} as const

const key = fc.constantFrom("a", "b", "name", "tags", "inner", "n", "deeper", "ok", "kind", "r", "side", "scores", "pair", "payload", "at", "children", "extra", "__proto__", "constructor")
const leaf = fc.oneof(fc.double(), fc.integer(), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant(null), fc.constantFrom("x", "y", "circle", "square", "2026-11-28T00:00:00.000Z"))
/** Values shaped like the Schemas' (the keys they know, often with one more), and any JSON. */
const value = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("node"), { maxLength: 3 }),
    fc.dictionary(key, tie("node"), { maxKeys: 5 })
  )
})).node

/**
 * A value with a symbol key, a non-enumerable key or a throwing getter added to it, or one of its keys
 * holding an object (often with a key too many) as a non-enumerable property, an inherited one or a
 * getter: what a JavaScript caller can pass.
 */
const hostile = fc.tuple(
  fc.dictionary(key, leaf, { maxKeys: 4 }),
  fc.constantFrom("symbol", "hidden", "getter", "proto-null", "nested-hidden", "nested-inherited", "nested-getter"),
  key,
  fc.dictionary(key, leaf, { maxKeys: 3 })
).map(([base, how, at, nested]) => {
  const copy: Record<PropertyKey, unknown> = how === "proto-null" ? Object.assign(Object.create(null), base) : { ...base }
  if (how === "symbol") copy[Symbol("s")] = 1
  if (how === "hidden") Object.defineProperty(copy, "extra", { value: 1, enumerable: false })
  if (how === "getter") Object.defineProperty(copy, "b", { get: () => { throw new Error("boom") }, enumerable: true })
  if (how === "nested-hidden") Object.defineProperty(copy, at, { value: nested, enumerable: false })
  if (how === "nested-getter") Object.defineProperty(copy, at, { get: () => nested, enumerable: false })
  if (how === "nested-inherited") return Object.assign(Object.create({ [at]: nested }), base)
  return copy
})

const outcome = (result: Result.Result<unknown, Schema.SchemaError>) =>
  Result.isSuccess(result) ? { ok: result.success, keys: JSON.stringify(result.success) } : { error: result.failure.message }

describe("strictResultDecoder", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    const codec = schema as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>
    const fast = strictResultDecoder(codec)
    const reference = Schema.decodeUnknownResult(codec)
    test.prop([fc.oneof(value, value, hostile, fc.anything())], { numRuns })(`${name}: answers what the strict decode answers`, (input) => {
      const expected = (() => {
        try {
          return outcome(reference(input, strictOptions))
        } catch (error) {
          return { threw: String(error) }
        }
      })()
      const actual = (() => {
        try {
          return outcome(fast(input))
        } catch (error) {
          return { threw: String(error) }
        }
      })()
      expect(actual).toEqual(expected)
    })
  }

  /** A snapshot as a run writes it, with JSON arguments and a child's snapshot inside. */
  const snapshot = {
    version: 1,
    agent: "teller",
    fingerprint: "f",
    state: {
      runId: "r1",
      input: "pay",
      skill: "default",
      elapsedMs: 12,
      transcript: [
        { role: "system", content: "s" },
        { role: "user", content: "pay" },
        { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "pay", arguments: "{\"to\":\"bob\"}" }] },
        { role: "tool", toolCallId: "c0", name: "look", content: "ok" }
      ],
      pending: [{ id: "c1", name: "pay", arguments: "{}" }],
      offered: ["pay"],
      ledger: { turns: 1, toolCalls: 1, tokens: 15, consecutive: 0, thresholdsFired: [] },
      invalidArgsRetries: {},
      knowledge: { k: "v" },
      awaiting: [{ id: "c1", tool: "pay", args: { to: "bob", amount: [1, { x: null }] } }],
      children: [{ id: "c2", tool: "child", snapshot: { version: 1, nested: { any: ["json"] } } }]
    }
  }
  const paths = (value: unknown, at: ReadonlyArray<string | number> = []): Array<ReadonlyArray<string | number>> =>
    typeof value !== "object" || value === null
      ? [at]
      : [at, ...Object.entries(value).flatMap(([key, inner]) => paths(inner, [...at, Array.isArray(value) ? Number(key) : key]))]
  const edited = fc.tuple(fc.constantFrom(...paths(snapshot)), fc.constantFrom("extra", "replace", "delete", "same"), fc.oneof(leaf, fc.anything()), key).map(([path, op, replacement, extraKey]) => {
    const copy = structuredClone(snapshot) as Record<string | number, unknown>
    if (op === "same") return copy
    let parent: Record<string | number, unknown> = copy
    for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>
    const last = path.at(-1)
    const target = last === undefined ? copy : parent[last]
    if (op === "extra" && typeof target === "object" && target !== null) (target as Record<string, unknown>)[extraKey] = replacement
    else if (op === "delete" && last !== undefined) delete parent[last]
    else if (last !== undefined) parent[last] = replacement
    return copy
  })
  test.prop([edited], { numRuns })("a run snapshot, edited anywhere: answers what the strict decode answers", (input) => {
    const codec = RunSnapshotSchema as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>
    expect(outcome(strictResultDecoder(codec)(input))).toEqual(outcome(Schema.decodeUnknownResult(codec)(input, strictOptions)))
  })

  it("refuses an excess key inside a value an index signature decodes beside a property (JSON text included)", () => {
    const overlapping = schemas.overlapping as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>
    expect(Result.isFailure(strictResultDecoder(overlapping)({ a: { n: 1, ok: true } }))).toBe(true)
    expect(Result.isFailure(argsDecoder(Schema.toCodecJson(schemas.overlapping))('{"a":{"n":1,"ok":true}}'))).toBe(true)
    expect(Result.isFailure(strictResultDecoder(schemas.twoRecords as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>)({ k: { n: 1, ok: true } }))).toBe(true)
    expect(strictResultDecoder(overlapping)({ a: { n: 1 }, b: { n: 2 } })).toEqual(Result.succeed({ a: { n: 1 }, b: { n: 2 } }))
  })

  it("refuses an excess key under a declared key that is not enumerable, inherited or a getter", () => {
    const outer = strictResultDecoder(Schema.Struct({ a: Schema.Struct({ n: Schema.Finite }) }) as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>)
    const inner = { n: 1, extra: 2 }
    expect(Result.isFailure(outer(Object.defineProperty({}, "a", { value: inner, enumerable: false })))).toBe(true)
    expect(Result.isFailure(outer(Object.create({ a: inner })))).toBe(true)
    expect(Result.isFailure(outer(new (class { get a() { return inner } })()))).toBe(true)
    expect(outer(Object.create({ a: { n: 1 } }))).toEqual(Result.succeed({ a: { n: 1 } }))
  })

  it("refuses an excess key at any depth, and takes the union member that has it", () => {
    const nested = strictResultDecoder(schemas.nested as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>)
    expect(Result.isFailure(nested({ a: 1, extra: 2 }))).toBe(true)
    expect(Result.isFailure(nested({ a: 1, inner: { n: 1, deeper: { ok: true, extra: 1 } } }))).toBe(true)
    expect(Result.isFailure(nested(JSON.parse('{"a":1,"__proto__":{"x":1}}')))).toBe(true)
    expect(nested({ a: 1, inner: { n: 2 } })).toEqual(Result.succeed({ a: 1, inner: { n: 2 } }))
    const union = strictResultDecoder(schemas.union as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>)
    expect(union({ a: 1, b: "x" })).toEqual(Result.succeed({ a: 1, b: "x" }))
    const rebuilt = strictResultDecoder(schemas.rebuilt as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>)
    expect(Result.isFailure(rebuilt({ a: 1, b: 5 }))).toBe(true)
    expect(rebuilt({ a: 1 })).toEqual(Result.succeed({ a: 1, b: 0 }))
  })
})
