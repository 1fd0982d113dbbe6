/**
 * The agent builder: a typed, immutable interface over a small factory. Every method returns a new
 * builder whose type records what was added, so `base = agent("x").model(m)` can branch safely and
 * mistakes (a tool from another agent, `run` without a model) fail to compile.
 *
 * The builder never imports the loop: `agentFactory(runner)` takes the function that runs a
 * definition (as Kysely's builders take a query executor), and the package entry binds it once.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import { AgentConfigError, isAgentError } from "../errors.ts"
import { type ModelClient, ModelClientService } from "../model/model-client.ts"
import type { AgentError } from "../errors.ts"
import type { MaybeEffect, RequirementsOf } from "../internal/from-maybe-effect.ts"
import { type AgentDefinition, AgentDefinitionKey, registerTools, resolveSkills } from "./agent-definition.ts"
import { agentAsTool, type AsToolArgs, type AsToolOptions } from "./agent-as-tool.ts"
import { builtinTools, type BuiltinTools, isBuiltinToolName } from "./builtin-tools.ts"
import { resolveToolChoice, type ToolByName, type ToolChoicePolicy } from "./tool-choice.ts"
import type { ErrorPolicy, RecoveryHandlers } from "./recovery.ts"
import { type BudgetOptions, defaultBudget, mergeBudget } from "./budget.ts"
import {
  agentOptionKeys,
  asToolOptionKeys,
  budgetOptionKeys,
  checkFunction,
  checkMemoryStore,
  checkModel,
  checkOptions,
  checkPickTools,
  checkRecovery,
  checkOneOf,
  checkSchema,
  checkString,
  kindOf,
  listenerAdvice,
  nearMiss
} from "./builder-validation.ts"
import { unreadableFromJson } from "../internal/json-readable.ts"
import { isModelFree, layerFailed, modelInContext, noModel, withDefinitionServices } from "./definition-services.ts"
import { type AgentResumeChecker, ResumeCheck } from "./resume-check.ts"
import type {
  AgentEvent,
  ArgsRepairedEvent,
  BudgetExceededEvent,
  BudgetThresholdEvent,
  ApprovalDecidedEvent,
  ApprovalRequestedEvent,
  HandoffEvent,
  HookFailedEvent,
  InvalidArgsEvent,
  KnowledgeUsedEvent,
  Listener,
  ModelCallEvent,
  ModelResponseEvent,
  RetryingEvent,
  RunEndEvent,
  RunStartEvent,
  RunStreamEvent,
  SkillChosenEvent,
  ToolErrorEvent,
  ToolHallucinatedEvent,
  ToolUseEvent,
  ToolProgressEvent,
  TurnEvent
} from "./events.ts"
import type { PickToolsOptions } from "./pick-tools.ts"
import type { Decisions } from "./decision.ts"
import type { Interceptor } from "./interceptor.ts"
import type { BudgetLimitPolicy } from "./budget-policy.ts"
import type { MayNeedApproval, RunResultOf, WithHandoffWaits } from "./run-outcome.ts"
import { inMemoryStore, type MemoryStore, memoryTools } from "./memory.ts"
import type { AllDeterministic, IsAny, Skill, SkillKind, SkillRequirements, SkillWaits } from "./skill.ts"
import { makeHandles, type RegisterFirst, type SkillHandles } from "./tool-handle.ts"
import type { AnyTool, Tool } from "./tool.ts"
import type { AgentTypeError } from "./agent-type-error.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"


/** The names of the tools in a registration record. */
export type ToolNames<TTools extends Record<string, AnyTool>> = Tool.Name<TTools[keyof TTools]>

type Simplify<T> = { [K in keyof T]: T[K] } & {}

/**
 * What `.tools(...)` accepts: a record (an array, a Map or a single tool is refused with the fix), each
 * key its tool's name, and no name already registered, at compile time.
 */
type CheckTools<TTools, $Tools> = $Tools extends ReadonlyArray<unknown>
  ? AgentTypeError<".tools(...) takes a record keyed by the tools' names, .tools({ add, multiply }), not an array">
  : $Tools extends ReadonlyMap<unknown, unknown> ? AgentTypeError<".tools(...) takes a record keyed by the tools' names, .tools({ add, multiply }), not a Map">
  : $Tools extends Tool<infer N, any, any, any, any> ? AgentTypeError<`.tools(...) takes a record keyed by the tools' names: write .tools({ ${N} })`>
  : NewTools<TTools, $Tools>

/** Each key must be its tool's name, and names already registered are refused, at compile time. */
type NewTools<TTools, $Tools> = {
  readonly [K in keyof $Tools]: K extends keyof TTools ? AgentTypeError<"a tool with this name is already registered on the agent">
    : $Tools[K] extends Tool<K & string, any, any, any, any> ? $Tools[K]
    : AgentTypeError<"each key must be the tool's own name: .tools({ add }) or .tools({ [add.name]: add })">
}

/**
 * What an agent builder has recorded, as one record (as Effect's `Tool<Name, Config, Requirements>`):
 *
 * - `name`: the agent's literal name; tool handles carry it.
 * - `input` / `output`: what `run` takes and returns (strings unless Schemas are given to `agent`).
 * - `tools`: the registered tools, keyed as passed to `.tools(...)`.
 * - `requirements`: the services a run still needs: `ModelClientService` until `.model(...)` (or until
 *   every skill is implemented by a function, `implementedBy`), plus what
 *   tools, hooks, knowledge loaders, memory stores, scorers and recovery handlers require, minus what
 *   `.provide(layer)` provided.
 *
 * @example
 * ```ts
 * type Support = typeof support extends AgentBuilder<infer T> ? T["requirements"] : never // Orders | AuditLog
 * ```
 */
export interface AgentShape {
  readonly name: string
  readonly input: unknown
  readonly output: unknown
  readonly tools: Record<string, AnyTool>
  readonly requirements: unknown
}

/** An empty list of skills is refused: it would leave the implicit skill, which may use every tool. */
type NotEmpty<$Skills extends ReadonlyArray<unknown>> = $Skills extends readonly [] ? AgentTypeError<
    ".skills(...) returned no skills: return at least one, or leave .skills(...) out for the one implicit skill that may use every registered tool"
  >
  : unknown

/**
 * Each skill must take the agent's input and answer its output: a skill handing off to an agent of
 * other types (or a skill `.output(...)` of another type) is refused saying so, at the skill.
 */
type SkillsOfAgent<T extends AgentShape, $Skills extends ReadonlyArray<unknown>> = {
  readonly [K in keyof $Skills]: $Skills[K] extends Skill<any, infer In, infer Out, any, any, any>
    ? IsAny<Out> extends false
      ? [Out] extends [T["output"]] ? InputOfAgent<T, $Skills[K], In>
      : AgentTypeError<
        "this skill answers another type than the agent's output: its .implementedBy(...) function, its .output(...) Schema and its handoff targets answer the agent's output type (or give this agent theirs: agent(name, { output }))",
        Out
      >
      : InputOfAgent<T, $Skills[K], In>
    : $Skills[K]
}

type InputOfAgent<T extends AgentShape, S, In> = IsAny<In> extends true ? S
  : [T["input"]] extends [In] ? S
  : AgentTypeError<
    "this skill takes another input than the agent's: its .implementedBy(...) function and its handoff targets take the agent's input type (or give this agent theirs: agent(name, { input }))",
    In
  >

/** The builder after a call that changed some slots of its shape. */
type Next<T extends AgentShape, U extends Partial<AgentShape>> = AgentBuilder<{
  readonly name: T["name"]
  readonly input: T["input"]
  readonly output: T["output"]
  readonly tools: "tools" extends keyof U ? Extract<U["tools"], Record<string, AnyTool>> : T["tools"]
  readonly requirements: "requirements" extends keyof U ? U["requirements"] : T["requirements"]
}>

/** The builder after registering user code that requires `R` (unchanged when `R` is `never`). */
type Requiring<T extends AgentShape, R> = [R] extends [never] ? AgentBuilder<T> : Next<T, { requirements: T["requirements"] | R }>

/** A hook whose answer's requirements are inferred: a value or a Promise needs nothing, an Effect its `R`. */
type Hook<E, $Out> = (event: E) => $Out

/** The message of `run` while a model has not been set (kept as it was for the model-only case). */
type NoModelMessage = "call .model(...) before .run(...) (or implement every skill with .implementedBy(...)), or use .runEffect(...) and provide ModelClient.layer(...)"

/**
 * What `run` is: a function once nothing is required, otherwise a type error naming what is missing.
 *
 * @example
 * ```ts
 * type Run = RunMethod<{ name: "a"; input: string; output: string; tools: {}; requirements: Orders }>
 * // AgentTypeError<"provide the missing services with .provide(layer) before .run(...), …", Orders>
 * ```
 */
export type RunMethod<T extends AgentShape> = [T["requirements"]] extends [never] ? (input: T["input"]) => RunPromise<T>
  : [T["requirements"]] extends [ModelClientService] ? AgentTypeError<NoModelMessage>
  : ModelClientService extends T["requirements"]
    ? AgentTypeError<"call .model(...) and .provide(layer) the missing services before .run(...), or use .runEffect(...)", Exclude<T["requirements"], ModelClientService>>
  : AgentTypeError<"provide the missing services with .provide(layer) before .run(...), or use .runEffect(...) and provide them", T["requirements"]>

/**
 * What `run` resolves with: the output, or `Completed<Out> | Suspended` when a registered tool may
 * need approval (see `RunResultOf`).
 *
 * @example
 * ```ts
 * type Out = RunPromise<{ name: "a"; input: string; output: number; tools: {}; requirements: never }> // Promise<number>
 * ```
 */
export type RunPromise<T extends AgentShape> = Promise<RunResultOf<T["tools"], T["output"]>>

/**
 * What `runEffect` returns: the output, a typed `AgentError`, and the services still required.
 *
 * @example
 * ```ts
 * type Program = RunEffect<{ name: "a"; input: string; output: string; tools: {}; requirements: Orders }>
 * // Effect<string, AgentError, Orders>
 * ```
 */
export type RunEffect<T extends AgentShape> = Effect.Effect<RunResultOf<T["tools"], T["output"]>, AgentError, T["requirements"]>

/**
 * What `runStream` returns: every event of the run and the model's deltas, failing with the run's error.
 *
 * @example
 * ```ts
 * type Events = RunStream<{ name: "a"; input: string; output: string; tools: {}; requirements: never }>
 * ```
 */
export type RunStream<T extends AgentShape> = Stream.Stream<RunStreamEvent, AgentError, T["requirements"]>

/**
 * An agent under construction, and runnable as soon as nothing is required. `T` records its name,
 * input, output, tools and the services it still requires (see {@link AgentShape}).
 */
export interface AgentBuilder<T extends AgentShape> {
  readonly name: T["name"]
  /** @internal The immutable definition the runtime interprets; read it with `definitionOf`. */
  readonly [AgentDefinitionKey]: AgentDefinition
  /** Sets the system prompt. */
  prompt(text: string): AgentBuilder<T>
  /** Sets the model: a provider (`openai(...)`, `ollama(...)`) or any `ModelClient`. */
  model(client: ModelClient): Next<T, { requirements: Exclude<T["requirements"], ModelClientService> }>
  /**
   * Provides services to every run, as `Effect.provide` would: what the Layer provides leaves the
   * requirements, what it needs joins them. A Layer that fails to build fails the run with
   * `AgentConfigError`. Requirements registered after this call are not covered by its type.
   */
  provide<ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>): Next<T, { requirements: Exclude<T["requirements"], ROut> | RIn }>
  /** Sets budget limits; unspecified limits keep their current value (default `maxTurns: 8`). */
  budget(options: BudgetOptions): AgentBuilder<T>
  /**
   * Registers tools, keyed by their names (`.tools({ add, multiply })`). Their handles are passed to
   * `.skills(...)`; a name already registered is refused. The services the tools require join the agent's.
   */
  tools<const $Tools extends object>(
    tools: $Tools & CheckTools<T["tools"], $Tools>
  ): Next<T, { tools: Simplify<T["tools"] & $Tools>; requirements: T["requirements"] | Tool.Requirements<$Tools[keyof $Tools]> }>
  /**
   * Declares skills from the handles of the registered tools. Only these handles are accepted, so a
   * skill cannot name an unregistered tool or another agent's tool. Without skills, the agent has one
   * implicit skill that may use every registered tool. A skill handing off to a target that may wait
   * for approval makes the run's result `Completed | Suspended` (recorded in `tools`, see `HandoffWaits`).
   */
  skills<const $Skills extends ReadonlyArray<Skill<T["name"], any, any, SkillKind, any, any>>>(
    define: (tools: SkillHandles<RegisterFirst, T["name"], T["tools"]>) => $Skills & NotEmpty<$Skills> & SkillsOfAgent<T, $Skills>
  ): Next<T, {
    tools: WithHandoffWaits<T["tools"], SkillWaits<$Skills[number]>>
    requirements:
      | (AllDeterministic<$Skills> extends true ? Exclude<T["requirements"], ModelClientService> : T["requirements"])
      | SkillRequirements<$Skills[number]>
  }>
  /**
   * Gives the agent memory: `memory_read`, `memory_write` and `memory_search` join every skill's
   * allowlist. The store (default: a new `inMemoryStore()`) lives as long as this agent value, so runs
   * of the same agent share it and other agents do not.
   */
  memory<$R = never>(store?: MemoryStore<$R>): Requiring<T, $R>
  /**
   * Offers each model call only the top tools of the skill's allowlist for the run's input (see
   * `pickTools`). The allowlist still governs execution. When no tool scores, all allowed tools are offered.
   */
  pickTools<$R = never>(options?: PickToolsOptions<$R>): Requiring<T, $R>
  /**
   * The agent's recovery defaults for invalid arguments and failed executions, below each tool's own
   * `recover` and `.recoverTool(name, ...)` (default `Recovery.feedback`). Merged with earlier calls.
   */
  recover<$R = never>(policy: ErrorPolicy<ToolNames<T["tools"]>, $R>): Requiring<T, $R>
  /** Recovery handlers for one tool, ahead of the agent's `.recover` defaults and behind the tool's own. */
  recoverTool<const $Name extends ToolNames<T["tools"]>, $R = never>(
    tool: $Name,
    handlers: RecoveryHandlers<$Name, $R>
  ): Requiring<T, $R>
  /**
   * An observer called once per failed run with the typed error (after `RunEnd`'s outcome is known);
   * a listener that throws is reported and never masks the error. To decide recovery, use `.recover`.
   */
  onError<$Out>(listener: Hook<AgentError, $Out>): Requiring<T, RequirementsOf<$Out>>
  /**
   * What a call to a tool outside the skill's allowlist (or to no tool at all) does: `"fail"` (default,
   * `ToolNotAllowed`) or `"feedback"` (the model is told which tools it may use, and the loop goes on).
   */
  disallowedToolPolicy(policy: "fail" | "feedback"): AgentBuilder<T>
  /**
   * The tool-choice policy of an agent without skills (with skills, each skill sets its own):
   * `"auto"`, `"required"`, `"none"`, `"output"` (the typed-answer tool), `{ tool: name }` of a
   * registered tool, or `{ lastTurn, otherTurns }` to force a choice only on the last turn `maxTurns` allows.
   */
  toolChoice(policy: ToolChoicePolicy<ToolByName<ToolNames<NoInfer<T["tools"]>>>>): AgentBuilder<T>
  /** When the model called a tool outside the allowlist or an unknown tool, under either policy. */
  onToolHallucinated<$Out>(listener: Hook<ToolHallucinatedEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /**
   * Once per budget dimension, when a run's usage first reaches `threshold` (default 0.8) of its limit.
   */
  onBudgetThreshold<$Out>(
    options: { readonly threshold?: number },
    listener: Hook<BudgetThresholdEvent, $Out>
  ): Requiring<T, RequirementsOf<$Out>>
  /** After a tool ran successfully: its name, decoded args, result and duration. */
  onToolUse<$Out>(listener: Hook<ToolUseEvent<T["tools"]>, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** At the start of each run. */
  onRunStart<$Out>(listener: Hook<RunStartEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When the skill handling the run was chosen. */
  onSkillChosen<$Out>(listener: Hook<SkillChosenEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** At the start of each turn. */
  onTurn<$Out>(listener: Hook<TurnEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** Before each model call, with the full request. */
  onModelCall<$Out>(listener: Hook<ModelCallEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** After each model call, with the response. */
  onModelResponse<$Out>(listener: Hook<ModelResponseEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** Fires before each retry of a model call: the provider waits `waitMs`, then makes attempt `attempt`. */
  onRetrying<$Out>(listener: Hook<RetryingEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /**
   * When a running tool reports progress (`context.progress(data)` in its `run`), before its outcome.
   *
   * @example
   * ```ts
   * agent("fetcher").tools({ download }).onToolProgress((e) => console.log(e.tool, e.data))
   * ```
   */
  onToolProgress<$Out>(listener: Hook<ToolProgressEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When a tool failed, with the recovery decision (an observer; `.recoverTool` decides). */
  onToolError<$Out>(listener: Hook<ToolErrorEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When a tool call's arguments did not decode, with the recovery decision. */
  onInvalidArgs<$Out>(listener: Hook<InvalidArgsEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When a knowledge source was used (loaded, or read from the run's cache). */
  onKnowledgeUsed<$Out>(listener: Hook<KnowledgeUsedEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When the model handed the conversation to another agent (`skill.handoffs(...)`). */
  onHandoff<$Out>(listener: Hook<HandoffEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When the run suspends because calls wait for a human decision (then `RunEnd` with `Suspended`). */
  onApprovalRequested<$Out>(listener: Hook<ApprovalRequestedEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When a decision given at resume is applied to its call. */
  onApprovalDecided<$Out>(listener: Hook<ApprovalDecidedEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When a tool's arguments were repaired and then decoded. */
  onArgsRepaired<$Out>(listener: Hook<ArgsRepairedEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When the run stops on its budget. */
  onBudgetExceeded<$Out>(listener: Hook<BudgetExceededEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** Once at the end of every run: success, failure or interruption. */
  onRunEnd<$Out>(listener: Hook<RunEndEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** Every event, in order (see `AgentEvent`): for tracing and test harnesses. */
  onEvent<$Out>(listener: Hook<AgentEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /** When another hook or a recovery policy failed (the `HookFailed` event). */
  onHookFailed<$Out>(listener: Hook<HookFailedEvent, $Out>): Requiring<T, RequirementsOf<$Out>>
  /**
   * Runs the agent and resolves with its output; rejects with one of the tagged `AgentError`s.
   * Available once nothing is required: after `.model(...)`, and `.provide(layer)` for the services
   * that tools, hooks and loaders require; otherwise its type names what is missing.
   */
  run: RunMethod<T>
  /**
   * Runs the agent as an Effect with a typed error channel; its requirements are the services still
   * missing. With a tool that may need approval, the result is `Completed<Out> | Suspended`.
   */
  runEffect(input: T["input"]): RunEffect<T>
  /**
   * Runs the agent as a Stream of its events with the model's text, reasoning and tool-call deltas,
   * ending with `RunEnd`, failing with the run's `AgentError`. The same loop as `runEffect`; stopping
   * the stream stops the run and its model request. For Promise code: `Stream.toAsyncIterable(...)`,
   * `Stream.toReadableStream(...)` or `eventStreamResponse(...)`.
   */
  runStream(input: T["input"]): RunStream<T>
  /**
   * Continues a suspended run from its snapshot (the `RunSnapshot`, its parsed JSON or its JSON text),
   * in this process or another, with one decision per waiting call: `Decision.approve`,
   * `Decision.deny(reason)` or `Decision.edit(args)`.
   */
  resume(snapshot: unknown, decisions: Decisions): RunEffect<T>
  /**
   * `resume` as a Stream of its events, as `runStream` is `runEffect`'s: `ApprovalDecided`, the calls,
   * the model's next answers with their deltas, and last `RunEnd` (whose outcome may be `Suspended`
   * again, with its snapshot); it fails with the resume's `AgentError` (a refused decision included,
   * before anything runs). Stopping the stream stops the run.
   *
   * @example
   * ```ts
   * const events = bank.resumeStream(stored, { k1: Decision.approve })
   * ```
   */
  resumeStream(snapshot: unknown, decisions: Decisions): RunStream<T>
  /**
   * Adds an interceptor for one tool: before each call of it runs, `interceptor` sees the decoded
   * arguments and answers `Intercept.proceed`, `.proceedWith(args)`, `.deny(reason)`,
   * `.substitute(result)` or (for tools that may need approval) `.suspend(reason)`. Several
   * interceptors of a tool run in order until one does not proceed.
   */
  intercept<const $Name extends ToolNames<T["tools"]>>(
    tool: $Name,
    interceptor: Interceptor<Extract<T["tools"][keyof T["tools"]], Tool<$Name, any, any, any, any>>>
  ): AgentBuilder<T>
  /**
   * What reaching a countable limit (turns, tool calls, tokens, repetitions) does instead of failing
   * with `BudgetExceeded`: `BudgetPolicy.extend(by)` (bounded: extensions of a limit add up to at most
   * the limit itself), `BudgetPolicy.finalAnswer` (one last model call without tools) or `.fail`.
   */
  budgetPolicy(policy: BudgetLimitPolicy): AgentBuilder<T>
  /**
   * Signs every snapshot this agent takes (HMAC-SHA256 with `secret`) and resumes only snapshots
   * signed so: unsigned, foreign or tampered ones are refused with `SnapshotRejected`.
   */
  signSnapshots(secret: string): AgentBuilder<T>
  /**
   * This agent as a tool for another agent: its arguments are this agent's input (an object input as
   * is, any other as `{ input }`), its result this agent's output. Each call is a child run of the
   * calling run (`parentRunId`, nested spans, usage charged to the caller's budget); without a model
   * of its own, it uses the caller's. The tool requires the services this agent still requires.
   *
   * @example
   * ```ts
   * const researcher = agent("researcher").model(m).prompt("Find facts")
   * const writer = agent("writer").model(m).tools({ research: researcher.asTool({ name: "research" }) })
   * ```
   */
  asTool<const $Name extends string>(
    options: AsToolOptions<$Name>
  ): Tool<$Name, AsToolArgs<T["input"]>, T["output"], Exclude<T["requirements"], ModelClientService>, MayNeedApproval<T["tools"]>>
}

/**
 * The shape of a new agent: nothing registered but the built-in tools, and no model yet.
 *
 * @example
 * ```ts
 * const fresh: AgentBuilder<NewAgent<"a", string, string>> = agent("a")
 * ```
 */
export interface NewAgent<TName extends string, TInput, TOutput> {
  readonly name: TName
  readonly input: TInput
  readonly output: TOutput
  readonly tools: BuiltinTools
  readonly requirements: ModelClientService
}

/** Optional Schemas for the agent's input and output. */
export interface AgentOptions<TInput, TOutput> {
  readonly input?: Schema.Codec<TInput, any, never, never>
  readonly output?: Schema.Codec<TOutput, any, never, never>
}

export { AgentDefinitionKey, definitionOf } from "./agent-definition.ts"
export { withDefinitionServices } from "./definition-services.ts"

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

export type { AgentResumeChecker } from "./resume-check.ts"

/** Continues a run of a definition from a snapshot as a stream of its events (`streamResumeAgent`), injected by the package entry. */
export type AgentResumeStreamer = (
  definition: AgentDefinition,
  snapshot: unknown,
  decisions: Decisions
) => Stream.Stream<RunStreamEvent, AgentError, ModelClientService>

/** The other views of the loop a factory may be given: checking a resume, and streaming one. */
export interface AgentFactoryExtras {
  readonly checkResume?: AgentResumeChecker
  readonly resumeStream?: AgentResumeStreamer
  /** How `run(input)` runs its Effect to a Promise (default `Effect.runPromise`). */
  readonly runPromise?: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>
}

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
  <const TName extends string>(name: TName): AgentBuilder<NewAgent<TName, string, string>>
  <const TName extends string, TInput = string, TOutput = string>(
    name: TName,
    options: AgentOptions<TInput, TOutput>
  ): AgentBuilder<NewAgent<TName, TInput, TOutput>>
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
export const agentFactory = (
  runner: AgentRunner,
  streamer?: AgentStreamer,
  resumer: AgentResumer = noResumer,
  extras: AgentFactoryExtras = {}
): AgentFactory =>
  ((name: string, options: AgentOptions<any, any> = {}) => {
    if (typeof name !== "string" || name.trim() === "") {
      throw new AgentConfigError({ subject: "agent", reason: "an agent needs a non-empty name" })
    }
    checkOptions(`agent "${name}"`, "agent(name, options)", options, agentOptionKeys)
    if (options.input !== undefined) checkSchema(`agent "${name}"`, "agent(name, { input })'s `input`", options.input)
    if (options.output !== undefined) {
      checkSchema(`agent "${name}"`, "agent(name, { output })'s `output`", options.output)
      // The model answers in JSON: a value JSON cannot give (a Schema.declare without a JSON encoding) could never decode.
      const unreadable = unreadableFromJson(options.output as Schema.Top)
      if (unreadable !== undefined) {
        throw new AgentConfigError({
          subject: `agent "${name}"`,
          reason: `its output's value at ${unreadable === "" ? "the root" : unreadable} cannot come from JSON (a Schema.declare without a JSON encoding, such as a function or a class instance): the model answers in JSON, so no answer could decode; use a Schema that JSON can give`
        })
      }
    }
    return makeBuilder({ runner, streamer, resumer, checker: extras.checkResume, resumeStreamer: extras.resumeStream, runPromise: extras.runPromise ?? Effect.runPromise }, Object.freeze({
    name,
    registry: Symbol(name),
    prompt: undefined,
    model: undefined,
    layers: [],
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

interface Runners {
  readonly runner: AgentRunner
  readonly streamer: AgentStreamer | undefined
  readonly resumer: AgentResumer
  readonly checker: AgentResumeChecker | undefined
  readonly resumeStreamer: AgentResumeStreamer | undefined
  readonly runPromise: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>
}

const makeBuilder = (runners: Runners, definition: AgentDefinition): AgentBuilder<any> => {
  const { runner, streamer, resumer, checker, resumeStreamer, runPromise } = runners
  const next = (patch: Partial<AgentDefinition>) => makeBuilder(runners, Object.freeze({ ...definition, ...patch }))
  const subject = `agent "${definition.name}"`
  const on = (event: AgentEvent["_tag"] | "*") => (listener: Listener<any>) => {
    const method = event === "*" ? "onEvent" : `on${event}`
    checkFunction(subject, `.${method}(...)`, listener, listenerAdvice[method]?.(listener))
    return next({ listeners: [...definition.listeners, { event, listener }] })
  }
  const model = definition.model ?? (isModelFree(definition) ? noModel(definition.name) : undefined)
  const withServices = (run: Effect.Effect<unknown, AgentError, any>) => withDefinitionServices(definition, run)
  const runEffect = (input: unknown): Effect.Effect<unknown, AgentError, any> => withServices(runner(definition, input))
  const resume = (snapshot: unknown, decisions: Decisions) => withServices(resumer(definition, snapshot, decisions))
  const runStream = (input: unknown) => streamOf(streamer === undefined ? undefined : () => streamer(definition, input))
  const resumeStream = (snapshot: unknown, decisions: Decisions) =>
    streamOf(resumeStreamer === undefined ? undefined : () => resumeStreamer(definition, snapshot, decisions))
  /** A run's events with the definition's services (its model, else the context's; its Layers). */
  const streamOf = (make: (() => Stream.Stream<RunStreamEvent, AgentError, ModelClientService>) | undefined): Stream.Stream<RunStreamEvent, AgentError, any> => {
    if (make === undefined) {
      return stream().fail(new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "this agent factory was made without a streaming runner" }))
    }
    let events: Stream.Stream<RunStreamEvent, AgentError, any> = make()
    if (model !== undefined) events = stream().provideService(events, ModelClientService, model)
    else events = stream().unwrap(Effect.map(modelInContext(definition.name), () => events))
    for (const layer of definition.layers) events = stream().provide(events, layer)
    return definition.layers.length === 0 ? events : stream().mapError(events, (error) => (isAgentError(error) ? error : layerFailed(definition.name, error)))
  }
  return Object.freeze({
    name: definition.name,
    [AgentDefinitionKey]: definition,
    [ResumeCheck]: checker === undefined ? undefined : (snapshot: unknown, decisions: Decisions) => checker(definition, snapshot, decisions),
    prompt: (prompt: string) => (checkString(subject, ".prompt(...)", prompt), next({ prompt })),
    model: (model: ModelClient) => (checkModel(subject, model), next({ model })),
    provide: (layer: Layer.Layer<any, any, any>) => {
      if (!Layer.isLayer(layer)) throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "`.provide(...)` takes a Layer" })
      return next({ layers: [...definition.layers, layer] })
    },
    budget: (options: BudgetOptions) => {
      if (options === undefined) throw new AgentConfigError({ subject, reason: ".budget(...) takes an object of options, got an undefined: .budget({ maxTurns: 5 })" })
      checkOptions(subject, ".budget(...)", options, budgetOptionKeys)
      return next({ budget: mergeBudget(definition.name, definition.budget, options) })
    },
    tools: (tools: object) => next({ tools: registerTools(definition, tools as Record<string, unknown>) }),
    skills: (define: (tools: any) => ReadonlyArray<unknown>) => {
      checkFunction(subject, ".skills(...)", define, "it takes a function from the tool handles to the skills: .skills(({ add }) => [skill(...).tools(add)])")
      const registered = Object.fromEntries(definition.tools.map((t) => [t.name, t]))
      return next({ skills: resolveSkills(definition, define(makeHandles(registered, definition.registry))) })
    },
    memory: (store: MemoryStore<any> = inMemoryStore()) => (checkMemoryStore(subject, ".memory(...)", store), next({ memory: memoryTools(store) })),
    pickTools: (toolSelection: PickToolsOptions<any> = {}) => (checkPickTools(subject, toolSelection), next({ toolSelection })),
    recover: (policy: ErrorPolicy<string, any>) => {
      checkRecovery(subject, ".recover(...)", policy, true)
      return next({ recovery: { ...definition.recovery, ...policy } })
    },
    recoverTool: (tool: string, handlers: RecoveryHandlers<string, any>) => {
      checkString(subject, ".recoverTool(name, handlers)'s name", tool)
      checkRecovery(subject, `.recoverTool("${tool}", ...)`, handlers, false)
      // Handlers for a name no registered tool has would never run: refused, as `.intercept` refuses it.
      if (!definition.tools.some((t) => t.name === tool)) {
        const names = definition.tools.map((t) => t.name)
        throw new AgentConfigError({ subject, reason: `.recoverTool("${tool}", ...): no tool named "${tool}" is registered${nearMiss(tool, names)}; register it with .tools(...) first` })
      }
      return next({ toolRecovery: { ...definition.toolRecovery, [tool]: handlers } })
    },
    onError: (listener: (error: AgentError) => MaybeEffect<unknown>) => {
      checkFunction(subject, ".onError(...)", listener, listenerAdvice["onError"]?.(listener))
      return on("RunEnd")((event: RunEndEvent) => (event.outcome._tag === "Failure" ? listener(event.outcome.error) : undefined))
    },
    toolChoice: (policy: unknown) => {
      if (definition.skills.length > 0) {
        throw new AgentConfigError({ subject, reason: ".toolChoice(...) is for an agent without skills: give each skill its own skill(...).toolChoice(...)" })
      }
      const allowed = definition.tools.filter((t) => !isBuiltinToolName(t.name)).map((t) => t.name)
      return next({ toolChoice: resolveToolChoice(subject, policy, { allowed, typed: definition.output !== undefined, byName: true }) })
    },
    disallowedToolPolicy: (disallowedToolPolicy: "fail" | "feedback") => {
      checkOneOf(subject, ".disallowedToolPolicy(...)", disallowedToolPolicy, ["fail", "feedback"])
      return next({ disallowedToolPolicy })
    },
    onToolHallucinated: on("ToolHallucinated"),
    onBudgetThreshold: (options: { readonly threshold?: number }, listener: Listener<BudgetThresholdEvent>) => {
      checkOptions(subject, ".onBudgetThreshold(options, listener)", options, ["threshold"])
      checkFunction(subject, ".onBudgetThreshold(options, listener)", listener)
      const threshold: unknown = options?.threshold ?? 0.8
      if (typeof threshold !== "number" || !(threshold > 0 && threshold <= 1)) {
        const shown = typeof threshold === "number" ? String(threshold) : typeof threshold === "string" ? JSON.stringify(threshold) : kindOf(threshold)
        throw new AgentConfigError({ subject: `agent "${definition.name}"`, reason: `a budget threshold must be a number in (0, 1], got ${shown}` })
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
    onRetrying: on("Retrying"),
    onToolProgress: on("ToolProgress"),
    onToolError: on("ToolError"),
    onInvalidArgs: on("InvalidArgs"),
    onKnowledgeUsed: on("KnowledgeUsed"),
    onHandoff: on("Handoff"),
    onApprovalRequested: on("ApprovalRequested"),
    onApprovalDecided: on("ApprovalDecided"),
    onArgsRepaired: on("ArgsRepaired"),
    onBudgetExceeded: on("BudgetExceeded"),
    onRunEnd: on("RunEnd"),
    onHookFailed: on("HookFailed"),
    onEvent: on("*"),
    run: ((input: unknown) =>
      model === undefined && definition.layers.length === 0
        ? Promise.reject(new AgentConfigError({ subject: `agent "${definition.name}"`, reason: "call .model(...) before .run(...)" }))
        : runPromise(runEffect(input) as Effect.Effect<unknown, AgentError>)) as any,
    runEffect: runEffect as any,
    runStream,
    resume: resume as any,
    resumeStream,
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
    asTool: ((options: AsToolOptions<string>) => (checkOptions(subject, ".asTool(...)", options, asToolOptionKeys), agentAsTool(definition, runEffect, options, resume))) as any
  })
}
