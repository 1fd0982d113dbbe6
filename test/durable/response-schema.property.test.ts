/**
 * A durable run records each model answer and replays it after a restart: the recorded form must keep
 * everything the loop and the spans read, the provider's response id and model included (a replayed
 * step once lost them, and with them `gen_ai.response.id`/`model` on the replayed span).
 */
import { fc, test } from "@fast-check/vitest"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { LlmResponseSchema } from "../../src/durable/schemas.ts"
import type { LlmResponse } from "../../src/index.ts"

const codec = Schema.toCodecJson(LlmResponseSchema)
const encode = Schema.encodeSync(codec)
const decode = Schema.decodeUnknownSync(codec)

const optional = <A>(key: string, arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined }).map((v) => (v === undefined ? {} : { [key]: v }))
const meta = fc.tuple(
  optional("responseId", fc.string()),
  optional("responseModel", fc.string()),
  optional("usage", fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() })),
  optional("finishReason", fc.constantFrom("stop", "tool-calls", "length", "content-filter", "refusal", "other"))
).map((parts) => Object.assign({}, ...parts))
const response: fc.Arbitrary<LlmResponse> = fc.oneof(
  fc.tuple(fc.string(), meta).map(([content, m]) => ({ _tag: "Text", content, ...m }) as LlmResponse),
  fc.tuple(fc.array(fc.record({ id: fc.string(), name: fc.string(), arguments: fc.string() }), { minLength: 1, maxLength: 3 }), meta)
    .map(([calls, m]) => ({ _tag: "ToolCalls", calls, ...m }) as LlmResponse)
)

describe("a recorded model answer", () => {
  test.prop([response])("comes back from its JSON as it was, response id and model included", (r) => {
    expect(decode(JSON.parse(JSON.stringify(encode(r))))).toEqual(r)
  })
})
