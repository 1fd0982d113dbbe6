/**
 * Decodes a model's final text into the agent's output Schema. Accepts a bare JSON value, JSON inside
 * a Markdown code fence, or (for string-like Schemas) the plain text.
 */
import { Result, Schema } from "effect"

type OutputSchema = Schema.Codec<any, any, never, never>
type Decoder = (input: unknown) => Result.Result<unknown, string>

const decoders = new WeakMap<OutputSchema, Decoder>()

const decoderFor = (schema: OutputSchema): Decoder => {
  const cached = decoders.get(schema)
  if (cached !== undefined) return cached
  const decode = Schema.decodeUnknownResult(Schema.toCodecJson(schema))
  const decoder: Decoder = (input) => Result.mapError(decode(input, { errors: "all", onExcessProperty: "error" }), (e) => e.message)
  decoders.set(schema, decoder)
  return decoder
}

const fence = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?```$/

/** The decoded output, or the decoder's readable report. */
export const decodeFinalAnswer = (schema: OutputSchema, text: string): Result.Result<unknown, string> => {
  const decode = decoderFor(schema)
  const trimmed = text.trim()
  const body = fence.exec(trimmed)?.[1] ?? trimmed
  let parsed: { readonly ok: true; readonly value: unknown } | { readonly ok: false }
  try {
    parsed = { ok: true, value: JSON.parse(body) }
  } catch {
    parsed = { ok: false }
  }
  if (parsed.ok) {
    const fromJson = decode(parsed.value)
    if (Result.isSuccess(fromJson)) return fromJson
    const asText = decode(text)
    return Result.isSuccess(asText) ? asText : fromJson
  }
  const asText = decode(text)
  return Result.isSuccess(asText) ? asText : Result.fail(`The answer is not valid JSON.\n${asText.failure}`)
}
