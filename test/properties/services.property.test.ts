/**
 * Laws of services and Layers over arbitrary (hostile) inputs:
 * - `fromEnvLayer` agrees with `fromEnv` on every environment: it fails exactly when `fromEnv` throws,
 *   always with an `AgentConfigError`, never a defect.
 * - `.provide(layer)` is `Effect.provide(layer)` around `runEffect`: same outcome, and the builder it
 *   was called on is unchanged.
 * - a tool declared without `run` answers whatever the provided `toolLayer` answers, for any
 *   implementation swapped in on the same agent.
 */
import { fc, test } from "@fast-check/vitest"
import { ConfigProvider, Context, Effect, Exit, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { AgentConfigError, agent, fromEnv, fromEnvLayer, text, tool, toolCalls, toolLayer } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

/** Strings a hostile or careless environment holds: empty, spaces, unicode, numbers in odd forms. */
const hostile = fc.oneof(
  fc.string(),
  fc.constantFrom("", " ", "0", "-1", "1e309", "NaN", "Infinity", "0x10", "2.5", "openai", "ollama", "anthropic", "\u0000", "🙂", "http://127.0.0.1:1"),
  fc.string({ unit: "grapheme" })
)
const variables = ["AI_PROVIDER", "AI_MODEL", "LLM_TEMPERATURE", "LLM_MAX_AGENT_STEPS", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "LLM_THINKING_BUDGET"]
const arbEnv = fc.dictionary(fc.constantFrom(...variables), hostile, { maxKeys: variables.length })

class Greeting extends Context.Service<Greeting, string>()("test/Greeting") {}
const greet = tool("greet", { args: Schema.Struct({ name: Schema.String }), run: ({ name }) => Effect.map(Effect.service(Greeting), (g) => `${g} ${name}`) })
const find = tool("find", { args: Schema.Struct({ id: Schema.String }), success: Schema.String })

/** A model that calls `name` with `args`, then answers with the tool's result in brackets (never empty). */
const callsOnce = (name: string, args: unknown) =>
  scriptedModel((request) => {
    const result = [...request.messages].reverse().find((m) => m.role === "tool")
    return result === undefined ? toolCalls([{ id: "c1", name, arguments: args }]) : text(`[${result.content}]`)
  })

describe("services laws", () => {
  test.prop([arbEnv], { numRuns })("fromEnvLayer fails exactly when fromEnv throws, with AgentConfigError", async (env) => {
    let thrown: unknown
    try {
      fromEnv(env)
    } catch (error) {
      thrown = error
    }
    const exit = await Effect.runPromise(
      Effect.exit(Layer.build(fromEnvLayer).pipe(Effect.scoped, Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))))
    )
    expect(Exit.isFailure(exit)).toBe(thrown !== undefined)
    if (thrown !== undefined) expect(thrown).toBeInstanceOf(AgentConfigError)
    if (Exit.isFailure(exit)) {
      const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
      expect(failure?._tag === "Fail" && failure.error instanceof AgentConfigError).toBe(true)
    }
  })

  test.prop([hostile, hostile], { numRuns })(".provide(layer) equals Effect.provide(layer) around runEffect", async (greeting, name) => {
    const base = agent("greeter").model(callsOnce("greet", { name })).tools({ greet })
    const layer = Layer.succeed(Greeting, greeting)
    const provided = base.provide(layer)
    const viaBuilder = await Effect.runPromise(Effect.exit(provided.runEffect("hi")))
    const viaEffect = await Effect.runPromise(Effect.exit(base.runEffect("hi").pipe(Effect.provide(layer))))
    expect(viaBuilder).toEqual(viaEffect)
    expect(Exit.isSuccess(viaBuilder) && viaBuilder.value).toBe(`[${greeting} ${name}]`)
    expect(provided).not.toBe(base)
  })

  test.prop([fc.array(hostile, { minLength: 1, maxLength: 4 }), hostile], { numRuns })(
    "a declared tool answers what the provided implementation answers",
    async (answers, id) => {
      const support = agent("support").model(callsOnce("find", { id })).tools({ find })
      for (const answer of answers) {
        expect(await support.provide(toolLayer(find, (args) => `${answer}${args.id}`)).run("q")).toBe(`[${answer}${id}]`)
      }
    }
  )
})
