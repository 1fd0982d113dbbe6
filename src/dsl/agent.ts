/**
 * The agent builder: a typed, immutable interface over a small factory. Every method returns a new
 * builder whose type records what was added, so `base = agent("x").model(m)` can branch safely and
 * mistakes (a tool from another agent, `run` without a model) fail to compile.
 *
 * The builder never imports the loop: `agentFactory(runner)` takes the function that runs a
 * definition (as Kysely's builders take a query executor), and the package entry binds it once.
 */
import { Effect, type Schema } from "effect"
import { AgentConfigError } from "../errors.ts"
import { type ModelClient, ModelClientService } from "../model/model-client.ts"
import type { AgentError } from "../errors.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import { type AgentDefinition, registerTools, resolveSkills } from "./agent-definition.ts"
import { builtinTools, type BuiltinTools } from "./builtin-tools.ts"
import type { ErrorPolicy, RecoveryHandlers } from "./recovery.ts"
import { type BudgetOptions, defaultBudget, mergeBudget } from "./budget.ts"
import type {
  AgentEvent,
  ArgsRepairedEvent,
  BudgetExceededEvent,
  BudgetThresholdEvent,
  HookFailedEvent,
  InvalidArgsEvent,
  KnowledgeUsedEvent,
  Listener,
  ModelCallEvent,
  ModelResponseEvent,
  RunEndEvent,
  RunStartEvent,
  SkillChosenEvent,
  ToolErrorEvent,
  ToolHallucinatedEvent,
  ToolUseEvent,
  TurnEvent
} from "./events.ts"
import type { PickToolsOptions } from "./pick-tools.ts"
import { inMemoryStore, type MemoryStore, memoryTools } from "./memory.ts"
import type { Skill } from "./skill.ts"
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
 * - `THasModel`: whether `.model(...)` was called; without it, `runEffect` requires `ModelClientService`.
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
  skills(
    define: (tools: SkillHandles<RegisterFirst, TName, TTools>) => ReadonlyArray<Skill<TName, TInput, TOutput>>
  ): AgentBuilder<TName, TInput, TOutput, TTools, THasModel>
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
  run: THasModel extends true ? (input: TInput) => Promise<TOutput>
    : AgentTypeError<"call .model(...) before .run(...), or use .runEffect(...) and provide ModelClient.layer(...)">
  /** Runs the agent as an Effect with a typed error channel. */
  runEffect(input: TInput): Effect.Effect<TOutput, AgentError, THasModel extends true ? never : ModelClientService>
}

/** Optional Schemas for the agent's input and output. */
export interface AgentOptions<TInput, TOutput> {
  readonly input?: Schema.Codec<TInput, any, never, never>
  readonly output?: Schema.Codec<TOutput, any, never, never>
}

/** Where a builder keeps its definition: a registered symbol, so it stays out of completions and JSON. */
export const AgentDefinitionKey: unique symbol = Symbol.for("effect-agent-dsl/AgentDefinition")

/**
 * Internal: the definition behind a builder, for the runtime and the test harness.
 *
 * @example
 * ```ts
 * definitionOf(agent("a").prompt("be brief")).prompt // "be brief"
 * ```
 */
export const definitionOf = (builder: { readonly [AgentDefinitionKey]: AgentDefinition }): AgentDefinition => builder[AgentDefinitionKey]

/**
 * Runs a definition on an input: the agentic loop (`runAgent`), injected by the package entry.
 * Needs a `ModelClientService` unless the definition has a model (the builder provides it then).
 */
export type AgentRunner = (definition: AgentDefinition, input: unknown) => Effect.Effect<unknown, AgentError, ModelClientService>

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
export const agentFactory = (runner: AgentRunner): AgentFactory =>
  ((name: string, options: AgentOptions<any, any> = {}) => {
    if (typeof name !== "string" || name.trim() === "") {
      throw new AgentConfigError({ subject: "agent", reason: "an agent needs a non-empty name" })
    }
    return makeBuilder(runner, Object.freeze({
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

const makeBuilder = (runner: AgentRunner, definition: AgentDefinition): AgentBuilder<string, unknown, unknown, any, boolean> => {
  const next = (patch: Partial<AgentDefinition>) => makeBuilder(runner, Object.freeze({ ...definition, ...patch }))
  const on = (event: AgentEvent["_tag"] | "*") => (listener: Listener<any>) =>
    next({ listeners: [...definition.listeners, { event, listener }] })
  const runEffect = (input: unknown) => {
    const run = runner(definition, input)
    return definition.model === undefined ? run : Effect.provideService(run, ModelClientService, definition.model)
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
    pickTools: (toolSelection: PickToolsOptions = {}) => next({ toolSelection }),
    recover: (policy: ErrorPolicy) => next({ recovery: { ...definition.recovery, ...policy } }),
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
      return makeBuilder(runner, Object.freeze({
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
    onArgsRepaired: on("ArgsRepaired"),
    onBudgetExceeded: on("BudgetExceeded"),
    onRunEnd: on("RunEnd"),
    onHookFailed: on("HookFailed"),
    onEvent: on("*"),
    run: ((input: unknown) =>
      definition.model === undefined
        ? Promise.reject(new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "call .model(...) before .run(...)" }))
        : Effect.runPromise(runEffect(input) as Effect.Effect<unknown, AgentError>)) as any,
    runEffect
  })
}
