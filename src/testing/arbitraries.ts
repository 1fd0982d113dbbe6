/**
 * fast-check arbitraries of model behaviour over a set of tools: tool calls (valid, invalid, unknown),
 * responses and whole scripts, for property tests of agents. Valid arguments are generated from each
 * tool's own Schema (Effect's `Arbitrary.schema`, seeded by fast-check) and encoded the way a model
 * sends them, so "valid" means exactly what the tool's decoder accepts.
 *
 * @module effect-agent-dsl/testing/arbitraries
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { handoffToolName } from "../dsl/agent-definition.ts"
import type { AnyTool } from "../dsl/tool.ts"
import { ModelError } from "../errors.ts"
import type { LlmResponseInit, ToolCallInit } from "../model/messages.ts"
import type { ScriptStep } from "./scripted-model.ts"

/** How often generated calls go wrong. Rates are probabilities in [0, 1]. */
export interface ArbToolCallOptions {
  /** Arguments meant to fail the Schema (wrong types, missing or extra keys, bad JSON, non-objects). Default 0.2. */
  readonly invalidRate?: number
  /** Calls to a tool name outside `tools`. Default 0.05. */
  readonly unknownRate?: number
  /** Arguments sent as a JSON string (as OpenAI does) rather than an object (as Ollama does). Default 0.5. */
  readonly jsonStringRate?: number
  /** Extra names to call that are not in `tools` (say, another skill's tools). */
  readonly foreignNames?: ReadonlyArray<string>
}

/** Options of {@link arbLlmResponse}: the call options plus the shape of responses. */
export interface ArbLlmResponseOptions extends ArbToolCallOptions {
  /** At most this many calls per response. Default 3. */
  readonly maxCalls?: number
  /** Final text answers. Default 0.2. */
  readonly textRate?: number
  /** Empty replies (blank text or no calls). Default 0.05. */
  readonly emptyRate?: number
}

/** Options of {@link arbModelScript}. */
export interface ArbModelScriptOptions extends ArbLlmResponseOptions {
  /** At most this many steps. Default 10. */
  readonly maxLength?: number
  /** Steps that fail with a `ModelError` (like a 429 after retries). Default 0.03. */
  readonly modelErrorRate?: number
}

const chance = (rate: number) => fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }).map((x) => x < rate)

const samplers = new WeakMap<AnyTool, (seed: number) => unknown>()

/** A function from a seed to valid, encoded arguments for `tool`. */
const validSampler = (tool: AnyTool): ((seed: number) => unknown) => {
  const cached = samplers.get(tool)
  if (cached !== undefined) return cached
  const { schema, json } = tool.codec
  let sampler: (seed: number) => unknown
  if (schema !== undefined && json !== undefined) {
    const arbitrary = Arbitrary.schema(schema)
    const encode = Schema.encodeSync(json)
    sampler = (seed) => {
      const [value] = Effect.runSync(Arbitrary.sampleEffect(arbitrary, { count: 1, seed, size: 4 }))
      return encode(value)
    }
  } else {
    sampler = (seed) => ({ seed })
  }
  samplers.set(tool, sampler)
  return sampler
}

/**
 * Valid arguments for `tool`, as a model would send them (JSON values; `jsonString` encodes them).
 *
 * @example
 * ```ts
 * fc.assert(fc.property(arbValidArgs(add), (args) => Result.isSuccess(add.codec.check(args))))
 * ```
 */
export const arbValidArgs = (tool: AnyTool): fc.Arbitrary<unknown> => fc.integer().map(validSampler(tool))

const otherTypeValue = (value: unknown): unknown =>
  typeof value === "number" ? String(value) : typeof value === "string" ? 12345 : typeof value === "boolean" ? "yes" : Array.isArray(value) ? "[]" : value === null ? {} : 7

/**
 * Arguments meant to fail `tool`'s Schema: a valid object with one field of the wrong type, a required
 * field missing, an unexpected extra field; or a non-object, or broken JSON. (For tools whose Schema
 * accepts anything, some of these still decode: the tool's decoder is the judge.)
 */
export const arbInvalidArgs = (tool: AnyTool): fc.Arbitrary<unknown> => {
  const objects = arbValidArgs(tool).filter((v): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v))
  const required: ReadonlyArray<string> = Array.isArray(tool.definition.parameters.required) ? tool.definition.parameters.required : []
  const variants: Array<fc.Arbitrary<unknown>> = [
    fc.constantFrom(null, 42, "plain text", [], true, [1, 2, 3]),
    fc.constantFrom('{"a": 1, "b":', "{not json}", "[1, 2", "nul"),
    objects.map((v) => ({ ...v, __unexpected__: "surprise" }))
  ]
  if (required.length > 0) {
    variants.push(
      fc.tuple(objects, fc.constantFrom(...required)).map(([v, key]) => ({ ...v, [key]: otherTypeValue(v[key]) })),
      fc.tuple(objects, fc.constantFrom(...required)).map(([v, key]) => {
        const { [key]: _, ...rest } = v
        return rest
      })
    )
  }
  return fc.oneof(...variants)
}

/**
 * One tool call over `tools`: mostly valid, sometimes with invalid arguments, sometimes to an unknown
 * (or foreign) tool.
 *
 * @example
 * ```ts
 * fc.sample(arbToolCall([add, multiply], { invalidRate: 0.5 }), 3)
 * ```
 */
export const arbToolCall = (tools: ReadonlyArray<AnyTool>, options: ArbToolCallOptions = {}): fc.Arbitrary<ToolCallInit> => {
  const invalidRate = options.invalidRate ?? 0.2
  const unknownRate = tools.length === 0 ? 1 : options.unknownRate ?? 0.05
  const jsonStringRate = options.jsonStringRate ?? 0.5
  const unknownNames = fc.oneof(
    fc.constantFrom("unknown_tool", "rm_rf", ...(options.foreignNames ?? [])),
    fc.stringMatching(/^[a-z_]{1,12}$/).filter((name) => !tools.some((t) => t.name === name))
  )
  const known = tools.length === 0
    ? unknownNames.map((name) => ({ name, args: fc.constant<unknown>({}) }))
    : fc.constantFrom(...tools).map((tool) => ({ name: tool.name as string, args: fc.oneof(
      { weight: Math.round((1 - invalidRate) * 100), arbitrary: arbValidArgs(tool) },
      { weight: Math.round(invalidRate * 100), arbitrary: arbInvalidArgs(tool) }
    ) }))
  const target = fc.oneof(
    { weight: Math.round((1 - unknownRate) * 100), arbitrary: known },
    { weight: Math.round(unknownRate * 100), arbitrary: unknownNames.map((name) => ({ name, args: fc.constant<unknown>({}) })) }
  )
  return fc.record({ id: fc.stringMatching(/^call_[a-z0-9]{0,6}$/), target, asString: chance(jsonStringRate) }).chain(({ id, target, asString }) =>
    target.args.map((args): ToolCallInit => ({
      id,
      name: target.name,
      arguments: asString && typeof args !== "string" ? JSON.stringify(args) ?? "" : args
    }))
  )
}

/** A non-blank reply: ASCII half the time, else any graphemes (accents, emoji as surrogate pairs, joined sequences). */
const replyText = fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }))
  .filter((s) => s.trim() !== "")

/**
 * One model response over `tools`: tool calls (1 to `maxCalls`), a final text (ASCII or any unicode),
 * or an empty reply.
 *
 * @example
 * ```ts
 * fc.sample(arbLlmResponse([add], { invalidRate: 0.3, textRate: 0.1 }), 5)
 * ```
 */
export const arbLlmResponse = (tools: ReadonlyArray<AnyTool>, options: ArbLlmResponseOptions = {}): fc.Arbitrary<LlmResponseInit> => {
  const textRate = options.textRate ?? 0.2
  const emptyRate = options.emptyRate ?? 0.05
  const callsRate = Math.max(0, 1 - textRate - emptyRate)
  const weight = (rate: number) => Math.round(rate * 100)
  return fc.oneof(
    {
      weight: weight(callsRate),
      arbitrary: fc.array(arbToolCall(tools, options), { minLength: 1, maxLength: options.maxCalls ?? 3 }).map(
        (calls): LlmResponseInit => ({ _tag: "ToolCalls", calls })
      )
    },
    { weight: weight(textRate), arbitrary: replyText.map((content): LlmResponseInit => ({ _tag: "Text", content })) },
    { weight: weight(emptyRate), arbitrary: fc.constantFrom<LlmResponseInit>({ _tag: "Text", content: "" }, { _tag: "ToolCalls", calls: [] }) }
  )
}

/**
 * A whole script for `scriptedModel`: up to `maxLength` responses, some of them model errors.
 *
 * @example
 * ```ts
 * fc.assert(fc.asyncProperty(arbModelScript([add, multiply]), async (script) => { ... }))
 * ```
 */
export const arbModelScript = (tools: ReadonlyArray<AnyTool>, options: ArbModelScriptOptions = {}): fc.Arbitrary<ReadonlyArray<ScriptStep>> => {
  const modelErrorRate = options.modelErrorRate ?? 0.03
  const step: fc.Arbitrary<ScriptStep> = fc.oneof(
    { weight: Math.round((1 - modelErrorRate) * 100), arbitrary: arbLlmResponse(tools, options) },
    {
      weight: Math.round(modelErrorRate * 100),
      arbitrary: fc.constantFrom(429, 500, 503).map((status) => new ModelError({ provider: "scripted", reason: `HTTP ${status} (scripted)`, status, retryable: true }))
    }
  )
  return fc.array(step, { maxLength: options.maxLength ?? 10 })
}

/** Options of {@link arbMcpToolNames}. */
export interface ArbMcpToolNamesOptions {
  /** At most this many names. Default 12. */
  readonly maxLength?: number
}

/**
 * Lists of distinct MCP server tool names as hostile servers send them: families that differ only by
 * `.`, `_`, `/`, `-` or a space, characters providers refuse (unicode, emoji), names far longer than
 * 64 characters that share a long prefix, and names shaped like the hashed names the client makes.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(arbMcpServerName(), arbMcpToolNames(), (server, names) => mcpToolNames(server, names).toAgent.size === names.length))
 * ```
 */
export const arbMcpToolNames = (options: ArbMcpToolNamesOptions = {}): fc.Arbitrary<ReadonlyArray<string>> => {
  const word = fc.stringMatching(/^[a-z]{1,8}$/)
  const separator = fc.constantFrom(".", "_", "/", "-", " ", ":", "é", "🙂")
  const family = fc.tuple(word, fc.array(separator, { minLength: 1, maxLength: 4 }), word)
    .map(([a, seps, b]) => seps.map((sep) => `${a}${sep}${b}`))
  const long = fc.tuple(fc.integer({ min: 50, max: 200 }), fc.array(word, { minLength: 1, maxLength: 3 }))
    .map(([n, tails]) => tails.map((tail) => `${"p".repeat(n)}_${tail}`))
  const hashLike = fc.tuple(word, fc.stringMatching(/^[0-9a-f]{8}$/)).map(([a, h]) => [`${a}_${a}_${h}`, `${a}.${a}`])
  const any = fc.string({ minLength: 1, maxLength: 80, unit: "grapheme" }).map((x) => [x])
  return fc.array(fc.oneof(family, long, hashLike, any, word.map((w) => [w])), { maxLength: options.maxLength ?? 12 })
    .map((groups) => [...new Set(groups.flat())])
}

/** Valid MCP server names (1-40 letters, digits, `_`, `-`), as `mcpStdio`/`mcpHttp` accept them. */
export const arbMcpServerName = (): fc.Arbitrary<string> => fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/)

/**
 * A response that hands off more than once, or beside ordinary calls: 1 to 3 calls to
 * `handoff_to_<target>` (repeats allowed) and up to 3 calls to `tools`, in any order, with unique ids.
 * What found that the calls after a handoff were left without a result in the target's transcript.
 *
 * @example
 * ```ts
 * fc.sample(arbParallelHandoffs(["billing", "support"], [refund]), 3)
 * ```
 */
export const arbParallelHandoffs = (
  targets: ReadonlyArray<string>,
  tools: ReadonlyArray<AnyTool>,
  options: ArbToolCallOptions = {}
): fc.Arbitrary<LlmResponseInit> => {
  const handoff = fc.constantFrom(...targets).map((target): ToolCallInit => ({ name: handoffToolName(target), arguments: {} }))
  const ordinary = tools.length === 0 ? fc.constant([]) : fc.array(arbToolCall(tools, { unknownRate: 0, ...options }), { maxLength: 3 })
  return fc.tuple(fc.array(handoff, { minLength: 1, maxLength: 3 }), ordinary)
    .chain(([handoffs, calls]) => {
      const all = [...handoffs, ...calls]
      return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length })
    })
    .map((calls): LlmResponseInit => ({ _tag: "ToolCalls", calls: calls.map((call, i) => ({ ...call, id: `call_${i}` })) }))
}

/**
 * An option name that is not in `known`: a near miss of a known one (a letter dropped, doubled or
 * changed in case, an `s` added or removed), one of `oldNames`, or any other identifier. For checking
 * that unknown options are refused at construction instead of silently ignored.
 *
 * @example
 * ```ts
 * fc.sample(arbUnknownOption(["maxTurns", "maxToolCalls"], ["onError"]), 3) // ["maxTurn", "onError", "zq"]
 * ```
 */
export const arbUnknownOption = (known: ReadonlyArray<string>, oldNames: ReadonlyArray<string> = []): fc.Arbitrary<string> => {
  const nearMiss = fc.tuple(fc.constantFrom(...known), fc.nat(), fc.constantFrom("drop", "double", "case", "plural")).map(([name, at, how]) => {
    const i = at % name.length
    switch (how) {
      case "drop":
        return name.slice(0, i) + name.slice(i + 1)
      case "double":
        return name.slice(0, i) + name[i] + name.slice(i)
      case "case":
        return name.slice(0, i) + (name[i] === name[i]!.toUpperCase() ? name[i]!.toLowerCase() : name[i]!.toUpperCase()) + name.slice(i + 1)
      default:
        return name.endsWith("s") ? name.slice(0, -1) : `${name}s`
    }
  })
  const other = fc.stringMatching(/^[A-Za-z_$][A-Za-z0-9_$]{0,15}$/)
  return fc.oneof(nearMiss, ...(oldNames.length === 0 ? [] : [fc.constantFrom(...oldNames)]), other).filter((name) => name !== "" && !known.includes(name))
}

export {
  arbClientBehaviour,
  arbHookBehaviour,
  arbHostileValueKind,
  arbToolBehaviour,
  hostileClient,
  hostileHook,
  hostileToolRun,
  hostileValue,
  hostileValueKinds
} from "./hostile.ts"
export type { ClientBehaviour, HookBehaviour, HostileValueKind, ToolBehaviour, ToolObservations } from "./hostile.ts"
