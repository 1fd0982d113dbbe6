/**
 * Skills: a named capability of an agent. An agentic skill lists the tools the model may call while it
 * is active (its allowlist); a deterministic skill is implemented by a function and never calls a model.
 */
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import type { KnowledgeLoader, KnowledgeSource } from "./knowledge.ts"
import type { AgentTypeError } from "./agent-type-error.ts"
import type { AnyToolHandle, HandleAgent, ToolHandle } from "./tool-handle.ts"
import { inMemoryStore, type MemoryStore } from "./memory.ts"
import { AgentConfigError } from "../errors.ts"
import { checkFunction, checkMemoryStore, checkSchema, checkString } from "./builder-validation.ts"
import type { Tool } from "./tool.ts"
import type { ToolChoicePolicy } from "./tool-choice.ts"
import type { ModelClientService } from "../model/model-client.ts"
import type { Completed } from "./run-outcome.ts"

/**
 * An agent a skill may hand the conversation to (see `Skill.handoffs`): any agent built with `agent(...)`.
 * `In`/`Out` are its input and output types.
 */
export interface HandoffTarget<In = any, Out = any> {
  readonly name: string
  runEffect(input: In): Effect.Effect<Out, any, any>
}

type TargetInput<T> = T extends HandoffTarget<infer In, any> ? In : never
/** What a target answers once it completed: `X` of `Completed<X> | Suspended`, else its result. */
type TargetOutput<T> = T extends HandoffTarget<any, infer Out> ? Settled<Out> : never
type Settled<Out> = [Extract<Out, Suspension>] extends [never] ? Out : CompletedOutput<Out>
type CompletedOutput<Out> = Out extends Completed<infer X> ? X : never
/** The calls a target may wait on: the pending calls of its `Suspended` (`never` for a target that never waits). */
type TargetWaits<T> = T extends HandoffTarget<any, infer Out> ? PendingOf<Out> : never
type PendingOf<Out> = Out extends Suspension ? Out["pending"][number] : never
type Suspension = { readonly _tag: "Suspended"; readonly pending: ReadonlyArray<unknown> }
type TargetRequirements<T> = T extends { runEffect(input: any): Effect.Effect<any, any, infer R> } ? R : never
/**
 * Internal: true when `T` is `any` (a skill whose input or output no Schema or target set yet).
 *
 * @example
 * ```ts
 * type Yes = IsAny<any> // true
 * ```
 */
export type IsAny<T> = 0 extends 1 & T ? true : false

/** What a deterministic skill receives: the run's input and an abort signal. */
export interface SkillContext {
  readonly signal: AbortSignal
}

/** A deterministic implementation: from the run's input to the final output; its Effect may require `R`. */
export type SkillImplementation<TInput, TOutput, R = never> = (input: TInput, context: SkillContext) => MaybeEffect<TOutput, R>

/** Whether a skill talks to a model (`"agentic"`) or is implemented by a function (`"deterministic"`). */
export type SkillKind = "agentic" | "deterministic"

/**
 * An immutable skill description. `TAgent` is the agent whose tool handles it uses (`never` while it
 * uses none); `TInput`/`TOutput` are fixed by `implementedBy`, which also makes `TKind`
 * `"deterministic"` (an agent whose skills are all deterministic runs without a model); `R` is what
 * its implementation and knowledge loaders require; `TWaits` the calls its handoff targets may wait
 * on for a human decision (`never` while none may), which make the agent's run `Completed | Suspended`.
 *
 * @example
 * ```ts
 * const compute = skill("compute", "Perform calculations").tools(add, multiply)
 * const echo = skill("echo").implementedBy((input: string) => input)
 * ```
 */
export interface Skill<TAgent extends string = never, TInput = any, TOutput = any, TKind extends SkillKind = SkillKind, R = never, TWaits = never> {
  readonly _tag: "Skill"
  readonly name: string
  readonly description: string
  readonly handles: ReadonlyArray<AnyToolHandle>
  readonly implementation: SkillImplementation<TInput, TOutput, any> | undefined
  readonly predicate: SkillPredicate | undefined
  readonly knowledgeSources: ReadonlyArray<KnowledgeSource>
  readonly outputSchema: Schema.Codec<TOutput, any, never, never> | undefined
  readonly handoffTargets: ReadonlyArray<HandoffTarget>
  /** Talks to the model without tools (`.chat()`). */
  readonly chatOnly: boolean
  /** This skill's own memory (`.memory(store)`), instead of the agent's. */
  readonly memoryStore: MemoryStore<any> | undefined
  /** The tool-choice policy given with `.toolChoice(...)`, checked when the agent is built. */
  readonly toolChoicePolicy: ToolChoicePolicy<AnyToolHandle> | undefined
  /**
   * Phantom: the agent whose handles this skill uses. Named so that a skill built from another agent's
   * handles reads "Types of property '\"~uses handles of agent\"' are incompatible".
   */
  readonly "~uses handles of agent"?: TAgent
  /** Phantom: the services its implementation and knowledge loaders require. */
  readonly "~requires"?: R
  /** Phantom: whether the skill is implemented by a function. */
  readonly "~kind"?: TKind
  /** Phantom: the calls its handoff targets may wait on. */
  readonly "~handoff waits"?: TWaits
  /**
   * Adds tools to the skill's allowlist, by the handles `.skills(...)` provides. A raw tool, or a handle
   * of another agent than the skill's other handles, is a compile error at that argument. Called with
   * no handles (the Kotlin reference's `tools()`), it declares the skill agentic with no tools of its
   * own, as `.chat()` does: the model still gets the agent's memory tools and the skill's knowledge.
   */
  tools<const H extends ReadonlyArray<unknown>>(
    ...handles: CheckHandles<[TAgent] extends [never] ? FirstAgent<H> : TAgent, H>
  ): Skill<[TAgent] extends [never] ? FirstAgent<H> : TAgent, TInput, TOutput, TKind, R, TWaits>
  /**
   * Makes the skill deterministic: `run` produces the final output, with no model call. A typed
   * agent checks that output against its output Schema's type: a value it refuses is `SkillFailed`.
   */
  implementedBy<$Input, $Output, $R = never>(
    run: SkillImplementation<$Input, $Output, $R>
  ): Skill<TAgent, $Input, $Output, "deterministic", R | NoInfer<$R>, TWaits>
  /**
   * Chooses this skill for inputs the predicate accepts. Among several skills the first accepting one
   * wins; a single skill without `.when` is the fallback.
   */
  when(predicate: SkillPredicate): Skill<TAgent, TInput, TOutput, TKind, R, TWaits>
  /**
   * Exposes a lazy knowledge source to the model as a tool named `name` (no arguments), on this skill's
   * allowlist only. Loaded on first use, cached for the run; each use fires `onKnowledgeUsed`. The
   * services the loader requires (`fileKnowledge` needs `FileSystem`) join the skill's requirements.
   */
  knowledge<$R = never>(
    name: string,
    description: string,
    loader: KnowledgeLoader<$R>,
    options?: { readonly preload?: boolean }
  ): Skill<TAgent, TInput, TOutput, TKind, R | NoInfer<$R>, TWaits>
  /**
   * Lets the model hand the whole conversation to another agent: each target is offered as a tool
   * `handoff_to_<name>`; calling it ends this run's loop and runs the target on the transcript so far
   * (its own prompt, tools and model; the caller's model when it has none), as a child run (a `Handoff`
   * event, `parentRunId`, the caller's budget charged). The target's output is the run's output, so its
   * output type (once completed) must be the agent's, and its input type the agent's; a typed agent
   * checks it against its own output Schema too (`OutputInvalid` when refused). A target that may
   * wait for a human decision suspends the run with it, so the agent's run becomes `Completed |
   * Suspended`, listing the target's waiting calls. The services the targets still require (but a
   * model) join the skill's.
   */
  handoffs<const $Targets extends ReadonlyArray<HandoffTarget>>(
    ...targets: $Targets
  ): Skill<
    TAgent,
    // A second `.handoffs(...)` keeps what the first set, joined with its own targets' types: the
    // agent's `.skills(...)` then checks every target (`SkillsOfAgent`), not only the first call's.
    IsAny<TInput> extends true ? TargetInput<$Targets[number]> : TInput & TargetInput<$Targets[number]>,
    IsAny<TOutput> extends true ? TargetOutput<$Targets[number]> : TOutput | TargetOutput<$Targets[number]>,
    "agentic",
    R | Exclude<TargetRequirements<$Targets[number]>, ModelClientService>,
    TWaits | TargetWaits<$Targets[number]>
  >
  /**
   * Makes this skill's final answer typed: the model answers by calling a `submit` tool whose parameters
   * are this Schema (or with text that decodes into it). Overrides the agent's output Schema.
   */
  output<$Output>(schema: Schema.Codec<$Output, any, never, never>): Skill<TAgent, TInput, $Output, TKind, R, TWaits>
  /**
   * Declares a skill that talks to the model without tools (a pure chat skill; several of them can be
   * routed between), as `.tools()` with no handles does. A skill given nothing (no tools, knowledge,
   * handoffs, memory nor implementation, and not `.chat()`) is refused as a mistake.
   */
  chat(): Skill<TAgent, TInput, TOutput, "agentic", R, TWaits>
  /**
   * Gives this skill (only) memory: `memory_read`, `memory_write`, `memory_search` over `store` (in-memory
   * by default). It replaces the agent's `.memory(...)` for this skill.
   */
  memory<$R = never>(store?: MemoryStore<$R>): Skill<TAgent, TInput, TOutput, TKind, R | NoInfer<$R>, TWaits>
  /**
   * What the model is told about calling tools on each turn: `"auto"`, `"required"`, `"none"`,
   * `"output"` (the typed-answer tool), one of this skill's tool handles, or `{ lastTurn, otherTurns }`
   * to force a choice only on the last turn `maxTurns` allows. A handle outside the skill's tools is
   * refused when the agent is built (another agent's handle does not compile).
   */
  toolChoice(policy: ToolChoicePolicy<[TAgent] extends [never] ? never : ToolHandle<NoInfer<TAgent>, any>>): Skill<TAgent, TInput, TOutput, TKind, R, TWaits>
}

/** The agent of the first handle in `H` (`never` for `any`, already reported where it came from). */
type FirstAgent<H extends ReadonlyArray<unknown>> = 0 extends 1 & H[0] ? never
  : H extends readonly [ToolHandle<infer A, any>, ...ReadonlyArray<unknown>] ? A
  : never

/** Each argument of `skill.tools(...)`: a handle of `TAgent`, or a message saying what to pass instead. */
export type CheckHandles<TAgent extends string, H extends ReadonlyArray<unknown>> = {
  readonly [I in keyof H]: H[I] extends ToolHandle<infer A, infer T>
    ? [A] extends [TAgent] ? H[I]
    : AgentTypeError<`the handle of '${Tool.Name<T>}' belongs to agent '${A}', not '${TAgent}': a skill takes the handles that .skills(handles => ...) of its own agent passes`>
    : H[I] extends Tool<infer N, any, any, any, any>
      ? AgentTypeError<`'${N}' is a tool, not a handle: register it with .tools({ ${N} }) and take its handle from .skills(({ ${N} }) => [skill(...).tools(${N})])`>
    : AgentTypeError<"skill(...).tools(...) takes the tool handles that .skills(handles => ...) passes">
}

/** Decides from the run's input (as the model would see it: text) whether a skill handles it. */
export type SkillPredicate = (input: string) => boolean

/** Any skill. */
export type AnySkill = Skill<string, any, any, SkillKind, any, any>

/** The services a skill (or a union of skills) requires. */
export type SkillRequirements<S> = S extends Skill<any, any, any, any, infer R, any> ? R : never

/** The calls the handoff targets of a skill (or a union of skills) may wait on (`never` when none may). */
export type SkillWaits<S> = S extends Skill<any, any, any, any, any, infer W> ? W : never

/**
 * True when every skill of the list is deterministic: an agent made of them needs no model.
 *
 * @example
 * ```ts
 * type Free = AllDeterministic<[Skill<"a", string, string, "deterministic">]> // true
 * ```
 */
export type AllDeterministic<Skills extends ReadonlyArray<unknown>> = Skills extends ReadonlyArray<Skill<any, any, any, infer K, any, any>>
  ? [K] extends ["deterministic"] ? true : false
  : false

/**
 * Starts a skill. Give it tools with `.tools(...)` (with no handles: a skill with no tools of its own,
 * as `.chat()`) or an implementation with `.implementedBy(...)`; a skill given nothing is refused when
 * the agent is built.
 *
 * @example
 * ```ts
 * agent("calc").tools({ add }).skills(({ add }) => [skill("compute", "Perform calculations").tools(add)])
 * ```
 */
export const skill = (name: string, description = ""): Skill<never, any, any, "agentic"> => {
  // Untyped callers: a skill's name is what the model routes by and what events report.
  if (typeof name !== "string" || name.trim() === "") {
    throw new AgentConfigError({ subject: "skill", reason: "skill(name, description?) needs a non-empty name: skill(\"compute\", \"Perform calculations\")" })
  }
  checkString(`skill "${name}"`, "skill(name, description)'s description", description)
  return <Skill<never, any, any, "agentic">> makeSkill({
    name,
    description,
    handles: [],
    implementation: undefined,
    predicate: undefined,
    knowledgeSources: [],
    outputSchema: undefined,
    handoffTargets: [],
    chatOnly: false,
    memoryStore: undefined,
    toolChoicePolicy: undefined
  })
}

interface SkillState {
  readonly name: string
  readonly description: string
  readonly handles: ReadonlyArray<AnyToolHandle>
  readonly implementation: SkillImplementation<any, any, any> | undefined
  readonly predicate: SkillPredicate | undefined
  readonly knowledgeSources: ReadonlyArray<KnowledgeSource>
  readonly outputSchema: Schema.Codec<any, any, never, never> | undefined
  readonly handoffTargets: ReadonlyArray<HandoffTarget>
  readonly chatOnly: boolean
  readonly memoryStore: MemoryStore<any> | undefined
  readonly toolChoicePolicy: ToolChoicePolicy<AnyToolHandle> | undefined
}

const makeSkill = (state: SkillState): Skill<any, any, any, any, any> => {
  const subject = `skill "${state.name}"`
  return Object.freeze({
    _tag: "Skill",
    ...state,
    // `.tools()` with no handles is a deliberate "agentic, nothing of its own", not a forgotten list.
    tools: ((...handles: ReadonlyArray<AnyToolHandle>) =>
      makeSkill({ ...state, handles: [...state.handles, ...handles], chatOnly: state.chatOnly || handles.length === 0 })) as (
      ...handles: ReadonlyArray<unknown>
    ) => Skill<any, any, any, any, any>,
    implementedBy: (implementation: SkillImplementation<any, any, any>) => {
      checkFunction(subject, ".implementedBy(...)", implementation, "(input, { signal }) => output")
      return makeSkill({ ...state, implementation }) as Skill<any, any, any, "deterministic", any>
    },
    when: (predicate: SkillPredicate) => {
      checkFunction(subject, ".when(...)", predicate, "(input) => boolean, e.g. .when((input) => /refund/i.test(input))")
      return makeSkill({ ...state, predicate })
    },
    knowledge: (name: string, description: string, load: KnowledgeLoader<any>, options?: { readonly preload?: boolean }) =>
      makeSkill({ ...state, knowledgeSources: [...state.knowledgeSources, { name, description, load, preload: options?.preload === true }] }),
    output: (outputSchema: Schema.Codec<any, any, never, never>) => {
      checkSchema(subject, ".output(...)'s argument", outputSchema)
      return makeSkill({ ...state, outputSchema })
    },
    chat: () => makeSkill({ ...state, chatOnly: true }) as Skill<any, any, any, "agentic", any>,
    memory: (store: MemoryStore<any> = inMemoryStore()) => {
      checkMemoryStore(subject, ".memory(...)", store)
      return makeSkill({ ...state, memoryStore: store })
    },
    toolChoice: (toolChoicePolicy: ToolChoicePolicy<AnyToolHandle>) => makeSkill({ ...state, toolChoicePolicy }),
    handoffs: (...targets: ReadonlyArray<HandoffTarget>) =>
      makeSkill({ ...state, handoffTargets: [...state.handoffTargets, ...targets] }) as Skill<any, any, any, "agentic", any>
  })
}

/** True for values built by {@link skill}. */
export const isSkill = (u: unknown): u is AnySkill =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === "Skill"
