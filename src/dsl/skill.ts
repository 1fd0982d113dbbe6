/**
 * Skills: a named capability of an agent. An agentic skill lists the tools the model may call while it
 * is active (its allowlist); a deterministic skill is implemented by a function and never calls a model.
 */
import type { Schema } from "effect"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import type { KnowledgeLoader, KnowledgeSource } from "./knowledge.ts"
import type { AnyToolHandle, HandleAgent } from "./tool-handle.ts"

/** What a deterministic skill receives: the run's input and an abort signal. */
export interface SkillContext {
  readonly signal: AbortSignal
}

/** A deterministic implementation: from the run's input to the final output. */
export type SkillImplementation<TInput, TOutput> = (input: TInput, context: SkillContext) => MaybeEffect<TOutput>

/**
 * An immutable skill description. `TAgent` is the agent whose tool handles it uses (`never` while it
 * uses none); `TInput`/`TOutput` are fixed by `implementedBy`.
 *
 * @example
 * ```ts
 * const compute = skill("compute", "Perform calculations").tools(add, multiply)
 * const echo = skill("echo").implementedBy((input: string) => input)
 * ```
 */
export interface Skill<TAgent extends string = never, TInput = any, TOutput = any> {
  readonly _tag: "Skill"
  readonly name: string
  readonly description: string
  readonly handles: ReadonlyArray<AnyToolHandle>
  readonly implementation: SkillImplementation<TInput, TOutput> | undefined
  readonly predicate: SkillPredicate | undefined
  readonly knowledgeSources: ReadonlyArray<KnowledgeSource>
  readonly outputSchema: Schema.Codec<TOutput, any, never, never> | undefined
  /** Phantom: the agent whose handles this skill uses. */
  readonly "~agent"?: TAgent
  /** Adds tools to the skill's allowlist, by the handles `.skills(...)` provides. */
  tools<const H extends ReadonlyArray<AnyToolHandle>>(...handles: H): Skill<TAgent | HandleAgent<H[number]>, TInput, TOutput>
  /** Makes the skill deterministic: `run` produces the final output, with no model call. */
  implementedBy<$Input, $Output>(run: SkillImplementation<$Input, $Output>): Skill<TAgent, $Input, $Output>
  /**
   * Chooses this skill for inputs the predicate accepts. Among several skills the first accepting one
   * wins; a single skill without `.when` is the fallback.
   */
  when(predicate: SkillPredicate): Skill<TAgent, TInput, TOutput>
  /**
   * Exposes a lazy knowledge source to the model as a tool named `name` (no arguments), on this skill's
   * allowlist only. Loaded on first use, cached for the run; each use fires `onKnowledgeUsed`.
   */
  knowledge(name: string, description: string, loader: KnowledgeLoader): Skill<TAgent, TInput, TOutput>
  /**
   * Makes this skill's final answer typed: the model answers by calling a `submit` tool whose parameters
   * are this Schema (or with text that decodes into it). Overrides the agent's output Schema.
   */
  output<$Output>(schema: Schema.Codec<$Output, any, never, never>): Skill<TAgent, TInput, $Output>
}

/** Decides from the run's input (as the model would see it: text) whether a skill handles it. */
export type SkillPredicate = (input: string) => boolean

/** Any skill. */
export type AnySkill = Skill<string, any, any>

/**
 * Starts a skill. Give it tools with `.tools(...)` or an implementation with `.implementedBy(...)`;
 * a skill with neither is refused when the agent is built.
 *
 * @example
 * ```ts
 * agent("calc").tools({ add }).skills(({ add }) => [skill("compute", "Perform calculations").tools(add)])
 * ```
 */
export const skill = (name: string, description = ""): Skill => <Skill> makeSkill({
    name,
    description,
    handles: [],
    implementation: undefined,
    predicate: undefined,
    knowledgeSources: [],
    outputSchema: undefined
  })

interface SkillState {
  readonly name: string
  readonly description: string
  readonly handles: ReadonlyArray<AnyToolHandle>
  readonly implementation: SkillImplementation<any, any> | undefined
  readonly predicate: SkillPredicate | undefined
  readonly knowledgeSources: ReadonlyArray<KnowledgeSource>
  readonly outputSchema: Schema.Codec<any, any, never, never> | undefined
}

const makeSkill = (state: SkillState): Skill<any, any, any> =>
  Object.freeze({
    _tag: "Skill",
    ...state,
    tools: (...handles: ReadonlyArray<AnyToolHandle>) => makeSkill({ ...state, handles: [...state.handles, ...handles] }),
    implementedBy: (implementation: SkillImplementation<any, any>) => makeSkill({ ...state, implementation }),
    when: (predicate: SkillPredicate) => makeSkill({ ...state, predicate }),
    knowledge: (name: string, description: string, load: KnowledgeLoader) =>
      makeSkill({ ...state, knowledgeSources: [...state.knowledgeSources, { name, description, load }] }),
    output: (outputSchema: Schema.Codec<any, any, never, never>) => makeSkill({ ...state, outputSchema })
  })

/** True for values built by {@link skill}. */
export const isSkill = (u: unknown): u is AnySkill =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === "Skill"
