/**
 * The agent builder: a typed, immutable interface over a small factory. Every method returns a new
 * builder whose type records what was added, so `base = agent("x").model(m)` can branch safely and
 * mistakes (a tool from another agent, `run` without a model) fail to compile.
 *
 * The builder never imports the loop: `agentFactory(runner)` takes the function that runs a
 * definition (as Kysely's builders take a query executor), and the package entry binds it once.
 */
import { Effect, type Schema, Stream } from "effect"
import { AgentConfigError } from "../errors.ts"
import { type ModelClient, ModelClientService } from "../model/model-client.ts"
import { ModelError } from "../model/model-error.ts"
import type { AgentError } from "../errors.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import { type AgentDefinition, AgentDefinitionKey, registerTools, resolveSkills } from "./agent-definition.ts"
import { agentAsTool, type AsToolArgs, type AsToolOptions } from "./agent-as-tool.ts"
import { builtinTools, type BuiltinTools } from "./builtin-tools.ts"
import type { ErrorPolicy, RecoveryHandlers } from "./recovery.ts"
import { type BudgetOptions, defaultBudget, mergeBudget } from "./budget.ts"
import type {
  AgentEvent,
  ArgsRepairedEvent,
  BudgetExceededEvent,
  BudgetThresholdEvent,
  HandoffEvent,
  HookFailedEvent,
  InvalidArgsEvent,
  KnowledgeUsedEvent,
  Listener,
  ModelCallEvent,
  ModelResponseEvent,
  RunEndEvent,
  RunStartEvent,
  RunStreamEvent,
  SkillChosenEvent,
  ToolErrorEvent,
  ToolHallucinatedEvent,
  ToolUseEvent,
  TurnEvent
} from "./events.ts"
import type { PickToolsOptions } from "./pick-tools.ts"
import type { Decisions } from "./decision.ts"
import type { Interceptor } from "./interceptor.ts"
import type { BudgetLimitPolicy } from "./budget-policy.ts"
import type { RunResultOf } from "./run-outcome.ts"
import { inMemoryStore, type MemoryStore, memoryTools } from "./memory.ts"
import type { AllDeterministic, Skill } from "./skill.ts"
import { makeHandles, type RegisterFirst, type SkillHandles } from "./tool-handle.ts"
import type { AnyTool, Tool } from "./tool.ts"
import type { AgentTypeError } from "./agent-type-error.ts"

/** The names of the tools in a registration record. */
export type ToolNames<TTools extends Record<string, AnyTool>> = Tool.Name<TTools[keyof TTools]>

type Simplify<T> = { [K in keyof T]: T[K] } & {}

/** Each key must be its tool's name, and names already registered are refused, at compile time. */
type NewTools<TTools, $Tools> = {
  readonly [K in keyof $Tools]: K extends keyof TTools ? AgentTypeError<"a tool with this name is already registered on the agent">
    : $Tools[K] extends Tool<K & string, any, any, any> ? $Tools[K]
    : AgentTypeError<"each key must be the tool's own name: .tools({ add }) or .tools({ [add.name]: add })">
}

/**
 * An agent under construction, and runnable as soon as it has a model.
 *
 * - `TName`: the agent's literal name; tool handles carry it.
 * - `TInput` / `TOutput`: what `run` takes and returns (strings unless Schemas are given to `agent`).
 * - `TTools`: the registered tools, keyed as passed to `.tools(...)`.
 * - `THasModel`: whether the agent runs on its own: `.model(...)` was called, or every skill is
 *   implemented by a function (`implementedBy`); otherwise `runEffect` requires `ModelClientService`.
 */
export interface AgentBuilder<
  TName extends string,
  TInput,
  TOutput,
  TTools extends Record<string, AnyTool>,
  THasModel extends boolean
> {
  readonly name: TName
  /** @internal The immutable definition the runtime interprets; read it with `definitionOf`. */
  readonly [AgentDefinitionKey]: AgentDefinition
  /** Sets the system prompt. */
  prompt(text: string): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** Sets the model: a provider (`openai(...)`, `ollama(...)`) or any `ModelClient`. */
  model(client: ModelClient): AgentBuilder<TName, TInput, TOutput, TTools, true>
  /** Sets budget limits; unspecified limits keep their current value (default `maxTurns: 8`). */
  budget(options: BudgetOptions): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * Registers tools, keyed by their names (`.tools({ add, multiply })`). Their handles are passed to
   * `.skills(...)`; a name already registered is refused.
   */
  tools<const $Tools extends Record<string, AnyTool>>(
    tools: $Tools & NewTools<TTools, $Tools>
  ): AgentBuilder<TName, TInput, TOutput, Simplify<TTools & $Tools>, THasModel>
  /**
   * Declares skills from the handles of the registered tools. Only these handles are accepted, so a
   * skill cannot name an unregistered tool or another agent's tool. Without skills, the agent has one
   * implicit skill that may use every registered tool.
   */
  skills<const $Skills extends ReadonlyArray<Skill<TName, TInput, TOutput>>>(
    define: (tools: SkillHandles<RegisterFirst, TName, TTools>) => $Skills
  ): AgentBuilder<TName, TInput, TOutput, TTools, THasModel extends true ? true : AllDeterministic<$Skills>>
  /**
   * Gives the agent memory: `memory_read`, `memory_write` and `memory_search` join every skill's
   * allowlist. The store (default: a new `inMemoryStore()`) lives as long as this agent value, so runs
   * of the same agent share it and other agents do not.
   */
  memory(store?: MemoryStore): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * Offers each model call only the top tools of the skill's allowlist for the run's input (see
   * `pickTools`). The allowlist still governs execution. When no tool scores, all allowed tools are offered.
   */
  pickTools(options?: PickToolsOptions): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * The agent's recovery defaults for invalid arguments and failed executions, below each tool's own
   * `recover` and `.recoverTool(name, ...)` (default `Recovery.feedback`). Merged with earlier calls.
   */
  recover(policy: ErrorPolicy<ToolNames<TTools>>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** Recovery handlers for one tool, ahead of the agent's `.recover` defaults and behind the tool's own. */
  recoverTool<const $Name extends ToolNames<TTools>>(
    tool: $Name,
    handlers: RecoveryHandlers<$Name>
  ): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * An observer called once per failed run with the typed error (after `RunEnd`'s outcome is known);
   * a listener that throws is reported and never masks the error. To decide recovery, use `.recover`.
   */
  onError(listener: (error: AgentError) => MaybeEffect<unknown>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * What a call to a tool outside the skill's allowlist (or to no tool at all) does: `"fail"` (default,
   * `ToolNotAllowed`) or `"feedback"` (the model is told which tools it may use, and the loop goes on).
   */
  disallowedToolPolicy(policy: "fail" | "feedback"): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When the model called a tool outside the allowlist or an unknown tool, under either policy. */
  onToolHallucinated(listener: Listener<ToolHallucinatedEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * Once per budget dimension, when a run's usage first reaches `threshold` (default 0.8) of its limit.
   */
  onBudgetThreshold(
    options: { readonly threshold?: number },
    listener: Listener<BudgetThresholdEvent>
  ): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** After a tool ran successfully: its name, decoded args, result and duration. */
  onToolUse(listener: Listener<ToolUseEvent<TTools>>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** At the start of each run. */
  onRunStart(listener: Listener<RunStartEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When the skill handling the run was chosen. */
  onSkillChosen(listener: Listener<SkillChosenEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** At the start of each turn. */
  onTurn(listener: Listener<TurnEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** Before each model call, with the full request. */
  onModelCall(listener: Listener<ModelCallEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** After each model call, with the response. */
  onModelResponse(listener: Listener<ModelResponseEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When a tool failed, with the recovery decision (an observer; `.recoverTool` decides). */
  onToolError(listener: Listener<ToolErrorEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When a tool call's arguments did not decode, with the recovery decision. */
  onInvalidArgs(listener: Listener<InvalidArgsEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When a knowledge source was used (loaded, or read from the run's cache). */
  onKnowledgeUsed(listener: Listener<KnowledgeUsedEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When the model handed the conversation to another agent (`skill.handoffs(...)`). */
  onHandoff(listener: Listener<HandoffEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When a tool's arguments were repaired and then decoded. */
  onArgsRepaired(listener: Listener<ArgsRepairedEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When the run stops on its budget. */
  onBudgetExceeded(listener: Listener<BudgetExceededEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** Once at the end of every run: success, failure or interruption. */
  onRunEnd(listener: Listener<RunEndEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** Every event, in order (see `AgentEvent`): for tracing and test harnesses. */
  onEvent(listener: Listener<AgentEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /** When another hook or a recovery policy failed (the `HookFailed` event). */
  onHookFailed(listener: Listener<HookFailedEvent>): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * Runs the agent and resolves with its output; rejects with one of the tagged `AgentError`s.
   * Available once `.model(...)` was called.
   */
  run: THasModel extends true ? (input: TInput) => Promise<RunResultOf<TTools, TOutput>>
    : AgentTypeError<"call .model(...) before .run(...) (or implement every skill with .implementedBy(...)), or use .runEffect(...) and provide ModelClient.layer(...)">
  /**
   * Runs the agent as an Effect with a typed error channel. With a tool that may need approval, the
   * result is `Completed<TOutput> | Suspended` (see `RunResultOf`).
   */
  runEffect(input: TInput): Effect.Effect<RunResultOf<TTools, TOutput>, AgentError, THasModel extends true ? never : ModelClientService>
  /**
   * Continues a suspended run from its snapshot (the `RunSnapshot`, its parsed JSON or its JSON text),
   * in this process or another, with one decision per waiting call: `Decision.approve`,
   * `Decision.deny(reason)` or `Decision.edit(args)`.
   */
  resume(
    snapshot: unknown,
    decisions: Decisions
  ): Effect.Effect<RunResultOf<TTools, TOutput>, AgentError, THasModel extends true ? never : ModelClientService>
  /**
   * Adds an interceptor for one tool: before each call of it runs, `interceptor` sees the decoded
   * arguments and answers `Intercept.proceed`, `.proceedWith(args)`, `.deny(reason)`,
   * `.substitute(result)` or (for tools that may need approval) `.suspend(reason)`. Several
   * interceptors of a tool run in order until one does not proceed.
   */
  intercept<const $Name extends ToolNames<TTools>>(
    tool: $Name,
    interceptor: Interceptor<Extract<TTools[keyof TTools], Tool<$Name, any, any, any>>>
  ): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * What reaching a countable limit (turns, tool calls, tokens, repetitions) does instead of failing
   * with `BudgetExceeded`: `BudgetPolicy.extend(by)` (bounded: extensions of a limit add up to at most
   * the limit itself), `BudgetPolicy.finalAnswer` (one last model call without tools) or `.fail`.
   */
  budgetPolicy(policy: BudgetLimitPolicy): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * Signs every snapshot this agent takes (HMAC-SHA256 with `secret`) and resumes only snapshots
   * signed so: unsigned, foreign or tampered ones are refused with `SnapshotRejected`.
   */
  signSnapshots(secret: string): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
  /**
   * This agent as a tool for another agent: its arguments are this agent's input (an object input as
   * is, any other as `{ input }`), its result this agent's output. Each call is a child run of the
   * calling run (`parentRunId`, nested spans, usage charged to the caller's budget); without a model
   * of its own, it uses the caller's.
   *
   * @example
   * ```ts
   * const researcher = agent("researcher").model(m).prompt("Find facts")
   * const writer = agent("writer").model(m).tools({ research: researcher.asTool({ name: "research" }) })
   * ```
   */
  asTool<const $Name extends string>(options: AsToolOptions<$Name>): Tool<$Name, AsToolArgs<TInput>, TOutput>
  /**
   * Runs the agent as a Stream of its events with the model's text, reasoning and tool-call deltas,
   * ending with `RunEnd`, failing with the run's `AgentError`. The same loop as `runEffect`; stopping
   * the stream stops the run and its model request. For Promise code: `Stream.toAsyncIterable(...)`,
   * `Stream.toReadableStream(...)` or `eventStreamResponse(...)`.
   */
  runStream(input: TInput): Stream.Stream<RunStreamEvent, AgentError, THasModel extends true ? never : ModelClientService>
}

/** Optional Schemas for the agent's input and output. */
export interface AgentOptions<TInput, TOutput> {
  readonly input?: Schema.Codec<TInput, any, never, never>
  readonly output?: Schema.Codec<TOutput, any, never, never>
}

export { AgentDefinitionKey, definitionOf } from "./agent-definition.ts"

/**
 * Runs a definition on an input: the agentic loop (`runAgent`), injected by the package entry.
 * Needs a `ModelClientService` unless the definition has a model (the builder provides it then).
 */
export type AgentRunner = (definition: AgentDefinition, input: unknown) => Effect.Effect<unknown, AgentError, ModelClientService>

/** Runs a definition on an input as a stream of events (`streamAgent`), injected by the package entry. */
export type AgentStreamer = (definition: AgentDefinition, input: unknown) => Stream.Stream<RunStreamEvent, AgentError, ModelClientService>
/** Continues a run of a definition from a snapshot with decisions (`resumeAgent`), injected by the package entry. */
export type AgentResumer = (
  definition: AgentDefinition,
  snapshot: unknown,
  decisions: Decisions
) => Effect.Effect<unknown, AgentError, ModelClientService>

const noResumer: AgentResumer = (definition) =>
  Effect.fail(new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "this agent factory was built without a resumer" }))

/**
 * The type of `agent(name, options?)`: a new builder with the built-in tools registered.
 *
 * @example
 * ```ts
 * const make: AgentFactory = agent
 * ```
 */
export interface AgentFactory {
  <const TName extends string>(name: TName): AgentBuilder<TName, string, string, BuiltinTools, false>
  <const TName extends string, TInput = string, TOutput = string>(
    name: TName,
    options: AgentOptions<TInput, TOutput>
  ): AgentBuilder<TName, TInput, TOutput, BuiltinTools, false>
}

/**
 * The `agent` function over a runner. The package exports `agent = agentFactory(runAgent)`; another
 * runner (a recording one, a remote one) gives builders that run elsewhere.
 *
 * @example
 * ```ts
 * const agent = agentFactory(runAgent)
 * ```
 */
export const agentFactory = (runner: AgentRunner, streamer?: AgentStreamer, resumer: AgentResumer = noResumer): AgentFactory =>
  ((name: string, options: AgentOptions<any, any> = {}) => {
    if (typeof name !== "string" || name.trim() === "") {
      throw new AgentConfigError({ subject: "agent", reason: "an agent needs a non-empty name" })
    }
    return makeBuilder({ runner, streamer, resumer }, Object.freeze({
    name,
    registry: Symbol(name),
    prompt: undefined,
    model: undefined,
    budget: defaultBudget,
    tools: Object.values(builtinTools),
    skills: [],
    memory: [],
    toolSelection: undefined,
    listeners: [],
    budgetThresholds: [],
    recovery: {},
    toolRecovery: {},
    disallowedToolPolicy: "fail",
      input: options.input,
      output: options.output
    }))
  }) as AgentFactory

/** Every skill is implemented by a function: the agent runs without a model. */
const isModelFree = (definition: AgentDefinition): boolean =>
  definition.skills.length > 0 && definition.skills.every((s) => s.implementation !== undefined)

/**
 * The model of an agent made only of deterministic skills: only a choice among several skills without
 * `.when` would call it, and then the run fails with this explanation.
 */
const noModel = (agent: string): ModelClient => ({
  chat: () =>
    Effect.fail(new ModelError({
      provider: "none",
      reason: `agent "${agent}" has no model: its skills are deterministic, but choosing among several skills without .when(...) needs one. Give the skills predicates, or call .model(...)`
    }))
})

interface Runners {
  readonly runner: AgentRunner
  readonly streamer: AgentStreamer | undefined
  readonly resumer: AgentResumer
}

const makeBuilder = (runners: Runners, definition: AgentDefinition): AgentBuilder<string, unknown, unknown, any, boolean> => {
  const { runner, streamer, resumer } = runners
  const next = (patch: Partial<AgentDefinition>) => makeBuilder(runners, Object.freeze({ ...definition, ...patch }))
  const on = (event: AgentEvent["_tag"] | "*") => (listener: Listener<any>) =>
    next({ listeners: [...definition.listeners, { event, listener }] })
  const model = definition.model ?? (isModelFree(definition) ? noModel(definition.name) : undefined)
  const runEffect = (input: unknown) => {
    const run = runner(definition, input)
    return model === undefined ? run : Effect.provideService(run, ModelClientService, model)
  }
  const runStream = (input: unknown) => {
    if (streamer === undefined) {
      return Stream.fail(new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "this agent factory was made without a streaming runner" }))
    }
    const events = streamer(definition, input)
    return model === undefined ? events : Stream.provideService(events, ModelClientService, model)
  }
  const resume = (snapshot: unknown, decisions: Decisions) => {
    const run = resumer(definition, snapshot, decisions)
    return model === undefined ? run : Effect.provideService(run, ModelClientService, model)
  }
  return Object.freeze({
    name: definition.name,
    [AgentDefinitionKey]: definition,
    prompt: (prompt: string) => next({ prompt }),
    model: (model: ModelClient) => next({ model }),
    budget: (options: BudgetOptions) => next({ budget: mergeBudget(definition.name, definition.budget, options) }),
    tools: (tools: Record<string, unknown>) => next({ tools: registerTools(definition, tools) }),
    skills: (define: (tools: any) => ReadonlyArray<unknown>) => {
      const registered = Object.fromEntries(definition.tools.map((t) => [t.name, t]))
      return next({ skills: resolveSkills(definition, define(makeHandles(registered, definition.registry))) })
    },
    memory: (store: MemoryStore = inMemoryStore()) => next({ memory: memoryTools(store) }),
    pickTools: (toolSelection: PickToolsOptions = {}) => {
      const fail = (reason: string) => new AgentConfigError({ subject: `agent "${definition.name}"`, reason: `pickTools ${reason}` })
      const { maxCandidates, minScore, timeoutMs } = toolSelection
      if (maxCandidates !== undefined && !(Number.isInteger(maxCandidates) && maxCandidates >= 1)) throw fail(`maxCandidates must be a whole number >= 1, got ${String(maxCandidates)}`)
      if (minScore !== undefined && !Number.isFinite(minScore)) throw fail(`minScore must be a finite number, got ${String(minScore)}`)
      if (timeoutMs !== undefined && !(timeoutMs > 0)) throw fail(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`)
      return next({ toolSelection })
    },
    recover: (policy: ErrorPolicy) => {
      const steps = policy.maxRepairSteps
      if (steps !== undefined && !(Number.isInteger(steps) && steps >= 1 && steps <= 100)) {
        throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: `maxRepairSteps must be a whole number in [1, 100], got ${String(steps)}` })
      }
      return next({ recovery: { ...definition.recovery, ...policy } })
    },
    recoverTool: (tool: string, handlers: RecoveryHandlers) =>
      next({ toolRecovery: { ...definition.toolRecovery, [tool]: handlers } }),
    onError: (listener: (error: AgentError) => MaybeEffect<unknown>) =>
      on("RunEnd")((event: RunEndEvent) => (event.outcome._tag === "Failure" ? listener(event.outcome.error) : undefined)),
    disallowedToolPolicy: (disallowedToolPolicy: "fail" | "feedback") => next({ disallowedToolPolicy }),
    onToolHallucinated: on("ToolHallucinated"),
    onBudgetThreshold: (options: { readonly threshold?: number }, listener: Listener<BudgetThresholdEvent>) => {
      const threshold = options.threshold ?? 0.8
      if (!(threshold > 0 && threshold <= 1)) {
        throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: `a budget threshold must be in (0, 1], got ${threshold}` })
      }
      return makeBuilder(runners, Object.freeze({
        ...definition,
        budgetThresholds: definition.budgetThresholds.includes(threshold) ? definition.budgetThresholds : [...definition.budgetThresholds, threshold],
        listeners: [...definition.listeners, {
          event: "BudgetThreshold" as const,
          listener: (event: BudgetThresholdEvent) => (event.threshold === threshold ? listener(event) : undefined)
        }]
      }))
    },
    onToolUse: on("ToolUse"),
    onRunStart: on("RunStart"),
    onSkillChosen: on("SkillChosen"),
    onTurn: on("Turn"),
    onModelCall: on("ModelCall"),
    onModelResponse: on("ModelResponse"),
    onToolError: on("ToolError"),
    onInvalidArgs: on("InvalidArgs"),
    onKnowledgeUsed: on("KnowledgeUsed"),
    onHandoff: on("Handoff"),
    onArgsRepaired: on("ArgsRepaired"),
    onBudgetExceeded: on("BudgetExceeded"),
    onRunEnd: on("RunEnd"),
    onHookFailed: on("HookFailed"),
    onEvent: on("*"),
    run: ((input: unknown) =>
      model === undefined
        ? Promise.reject(new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "call .model(...) before .run(...)" }))
        : Effect.runPromise(runEffect(input) as Effect.Effect<unknown, AgentError>)) as any,
    runEffect: runEffect as any,
    runStream,
    resume: resume as any,
    intercept: (tool: string, interceptor: Interceptor<AnyTool>) => {
      if (!definition.tools.some((t) => t.name === tool)) {
        throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: `cannot intercept "${tool}": no tool of that name is registered` })
      }
      if (typeof interceptor !== "function") throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "an interceptor must be a function" })
      const interceptors = definition.interceptors ?? {}
      return next({ interceptors: { ...interceptors, [tool]: [...(interceptors[tool] ?? []), interceptor] } })
    },
    budgetPolicy: (policy: BudgetLimitPolicy) => {
      if (typeof policy !== "function") throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "a budget policy must be a function" })
      return next({ budgetPolicy: policy })
    },
    signSnapshots: (secret: string) => {
      if (typeof secret !== "string" || secret.length < 16) {
        throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "a snapshot secret must be a string of at least 16 characters" })
      }
      return next({ snapshotSecret: secret })
    },
    asTool: ((options: AsToolOptions<string>) => agentAsTool(definition, runEffect, options)) as any
  })
}
