/** Micro-benchmarks of this library's own hot spots: schema generation, argument decoding, pickTools. */
import { Effect, Result, Schema } from "effect"
import { ours } from "./ours-lib.ts"

const { pickTools, tool } = ours

/** Median of `samples` timings (ms) of `fn`, after `warmup` calls. */
export const medianMs = (fn: () => void, samples: number, warmup = Math.ceil(samples / 5)): number => {
  for (let i = 0; i < warmup; i++) fn()
  const times: Array<number> = []
  for (let i = 0; i < samples; i++) {
    const started = performance.now()
    fn()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}

const fiftyFields = () => {
  const fields: Record<string, Schema.Codec<any, any, never, never>> = {}
  for (let i = 0; i < 50; i++) {
    const kind = i % 5
    fields[`field_${i}`] = kind === 0
      ? Schema.String.annotate({ description: `text field ${i}` })
      : kind === 1
      ? Schema.Finite
      : kind === 2
      ? Schema.Literals(["low", "medium", "high"])
      : kind === 3
      ? Schema.optionalKey(Schema.Boolean)
      : Schema.Array(Schema.Struct({ id: Schema.String, weight: Schema.Finite }))
  }
  return Schema.Struct(fields)
}

const fiftyFieldArgs = () => {
  const args: Record<string, unknown> = {}
  for (let i = 0; i < 50; i++) {
    const kind = i % 5
    args[`field_${i}`] = kind === 0 ? `value ${i}` : kind === 1 ? i * 1.5 : kind === 2 ? "medium" : kind === 3 ? true : [{ id: "a", weight: 1 }]
  }
  return args
}

const words = ["weather", "forecast", "email", "calendar", "invoice", "payment", "search", "translate", "convert", "currency",
  "temperature", "booking", "flight", "hotel", "order", "refund", "customer", "report", "summary", "image"]

export const runMicro = () => {
  const schema = fiftyFields()
  const generationMs = medianMs(() => void tool("wide", { description: "fifty fields", args: schema, run: () => 0 }), 200)
  const wide = tool("wide", { description: "fifty fields", args: schema, run: () => 0 })
  const calc = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
  const wideDecode = wide.codec.check
  const calcDecode = calc.codec.check
  const wideJson = JSON.stringify(fiftyFieldArgs())
  if (Result.isFailure(wideDecode(wideJson))) throw new Error("the 50-field arguments must decode")
  const batch = 1000
  const wideDecodeUs = (medianMs(() => {
    for (let i = 0; i < batch; i++) wideDecode(wideJson)
  }, 30) * 1000) / batch
  const calcDecodeUs = (medianMs(() => {
    for (let i = 0; i < batch; i++) calcDecode('{"a":3,"b":5}')
  }, 30) * 1000) / batch

  const tools = Array.from({ length: 1000 }, (_, i) => {
    const a = words[i % words.length]!
    const b = words[(i * 7 + 3) % words.length]!
    return tool(`${a}_${b}_${i}`, {
      description: `Handles ${a} and ${b} requests, variant ${i}`,
      tags: [words[(i * 3) % words.length]!],
      safe: i % 10 !== 0,
      args: Schema.Struct({}),
      run: () => i
    })
  })
  const input = "What is the weather forecast for my flight to Lisbon, and convert the temperature to fahrenheit"
  const picked = Effect.runSync(pickTools(input, tools))
  if (picked.length === 0) throw new Error("pickTools must find candidates")
  const pickMs = medianMs(() => void Effect.runSync(pickTools(input, tools)), 30)
  return { generationMs, wideDecodeUs, calcDecodeUs, pickMs, picked: picked.map((p) => `${p.tool.name} (${p.score.toFixed(2)})`) }
}
