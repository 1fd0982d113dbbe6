/**
 * The package's `agent`: the builder of `dsl/` bound to the loop of `runtime/`. This is the one place
 * where describing and running meet, so neither folder imports the other. Beside `agent`, the two
 * other views of the same stepper: `runUntil` (suspend a run with a snapshot) and `resume` (continue
 * one from a snapshot).
 */
import * as Effect from "effect/Effect"
import { type AgentBuilder, type AgentShape, agentFactory, type AgentFactory, definitionOf, type AgentDefinitionKey, withDefinitionServices } from "./dsl/agent.ts"
import type { RunResultOf } from "./dsl/run-outcome.ts"
import type { AnyTool } from "./dsl/tool.ts"
import type { LlmMessage } from "./model/messages.ts"
import { checkSessionId, makeSession, type SessionOptions } from "./runtime/session.ts"
import type { AgentDefinition } from "./dsl/agent-definition.ts"
import type { AgentError } from "./errors.ts"
import { ModelClientService } from "./model/model-client.ts"
import { checkResumeAgent, resumeAgent, resumeRun, runAgent, type RunResult, runUntil as runUntilStep, streamAgent, streamResumeAgent } from "./runtime/run-agent.ts"
import type { RunSnapshot } from "./runtime/snapshot.ts"
import type { Decisions } from "./dsl/decision.ts"
import type { WaitingRun } from "./dsl/session-store.ts"
import { runPromiseOwned } from "./runtime/deadline.ts"

/**
 * Starts an agent. With an `output` Schema the final answer is decoded into it (the model is told the
 * JSON Schema and corrected within the budget); with an `input` Schema, `run` takes that type.
 *
 * @example
 * ```ts
 * const calculator = agent("calculator")
 *   .prompt("You are a calculator. Use the tools.")
 *   .model(client)
 *   .tools({ add, multiply })
 *   .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
 * await calculator.run("What is (3 + 5) * 2?")
 * ```
 */
export const agent: AgentFactory = agentFactory(runAgent, streamAgent, resumeAgent, { checkResume: checkResumeAgent, resumeStream: streamResumeAgent, runPromise: runPromiseOwned })

/** Anything built with `agent(...)`. */
type AnyBuilder = { readonly [AgentDefinitionKey]: AgentDefinition }

const withModel = <A>(definition: AgentDefinition, run: Effect.Effect<A, AgentError, ModelClientService>) =>
  withDefinitionServices(definition, run) as Effect.Effect<A, AgentError, ModelClientService>

/**
 * Runs an agent until it finishes or has taken `suspendAfter` steps (one model call or one tool call
 * each); a suspended run comes back with its snapshot (`encodeSnapshot` makes it JSON).
 *
 * @example
 * ```ts
 * const result = yield* runUntil(calculator, "What is (3 + 5) * 2?", { suspendAfter: 2 })
 * if (result._tag === "Suspended") await writeFile("run.json", encodeSnapshot(result.snapshot))
 * ```
 */
export const runUntil = (
  builder: AnyBuilder,
  input: unknown,
  options: { readonly suspendAfter?: number } = {}
): Effect.Effect<RunResult, AgentError, ModelClientService> => {
  const definition = definitionOf(builder)
  return withModel(definition, runUntilStep(definition, input, options))
}

/**
 * Continues a run from its snapshot with the same agent (same tools, parameters, skills and budget:
 * else `DefinitionChanged`), to the end or, with `suspendAfter`, to the next suspension.
 *
 * @example
 * ```ts
 * const snapshot = yield* decodeSnapshot(await readFile("run.json", "utf8"))
 * const result = yield* resume(calculator, snapshot)
 * ```
 */
export const resume = (
  builder: AnyBuilder,
  snapshot: RunSnapshot,
  options: { readonly suspendAfter?: number; readonly decisions?: Decisions } = {}
): Effect.Effect<RunResult, AgentError, ModelClientService> => {
  const definition = definitionOf(builder)
  return withModel(definition, resumeRun(definition, snapshot, options))
}

/**
 * A conversation with `builder` that continues across runs: `send` runs the agent with the session's
 * earlier messages (from `store`, cut by `window`) and records the new ones when the run completes
 * (and, when it fails, the tool calls that ran before, with their results). A run that suspends for
 * approval becomes the session's waiting run (`waiting()`); `resume(decisions)` continues it once and
 * records its exchange the same way. The id and options are checked at once (`AgentConfigError`: an
 * unknown option, a store without `load` and `append`, a window that keeps nothing).
 *
 * @example
 * ```ts
 * const chat = session(assistant, "user-42", { store: inMemorySessionStore(), window: { lastTurns: 20 } })
 * await chat.send("My name is Ada.")
 * await chat.send("What is my name?") // the model sees the first exchange
 * ```
 */
export const session = <T extends AgentShape & { readonly requirements: never }>(
  builder: AgentBuilder<T>,
  id: string,
  options: SessionOptions = {}
): Session<T["input"], RunResultOf<T["tools"], T["output"]>> => {
  checkSessionId(id)
  const definition = definitionOf(builder)
  const core = makeSession(definition, id, options)
  const sendEffect = (input: T["input"]) => withModel(definition, core.send(input)) as Effect.Effect<RunResultOf<T["tools"], T["output"]>, AgentError>
  const resumeEffect = (decisions: Decisions) => withModel(definition, core.resume(decisions)) as Effect.Effect<RunResultOf<T["tools"], T["output"]>, AgentError>
  return Object.freeze({
    id,
    sendEffect,
    send: (input: T["input"]) => Effect.runPromise(sendEffect(input)),
    history: core.history,
    waiting: core.waiting,
    resumeEffect,
    resume: (decisions: Decisions) => Effect.runPromise(resumeEffect(decisions))
  })
}

/**
 * A conversation that continues across runs; see {@link session}.
 *
 * @example
 * ```ts
 * const chat: Session<string, string> = session(assistant, "user-42")
 * ```
 */
export interface Session<TInput, TResult> {
  readonly id: string
  /** Runs the agent on `input` with the conversation so far; resolves with what `run` gives. */
  readonly send: (input: TInput) => Promise<TResult>
  /** `send` as an Effect with a typed error channel. */
  readonly sendEffect: (input: TInput) => Effect.Effect<TResult, AgentError>
  /** The messages stored for this session, in order. */
  readonly history: () => Effect.Effect<ReadonlyArray<LlmMessage>, AgentError>
  /** The run of this session waiting for decisions, if any (its pending calls and snapshot). */
  readonly waiting: () => Effect.Effect<WaitingRun | undefined, AgentError>
  /** Resumes the waiting run with decisions (once); its exchange is recorded when it completes. */
  readonly resume: (decisions: Decisions) => Promise<TResult>
  /** `resume` as an Effect. */
  readonly resumeEffect: (decisions: Decisions) => Effect.Effect<TResult, AgentError>
}
