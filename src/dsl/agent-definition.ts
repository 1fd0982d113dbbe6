/**
 * The immutable description of an agent that the builder produces and the runtime interprets, with
 * the construction-time checks that keep it consistent.
 */
import type * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import { AgentConfigError } from "../errors.ts"
import { shownValue } from "../internal/shown-value.ts"
import type { ModelClient } from "../model/model-client.ts"
import type { PickToolsOptions } from "./pick-tools.ts"
import type { Budget } from "./budget.ts"
import type { RegisteredListener } from "./events.ts"
import type { KnowledgeSource } from "./knowledge.ts"
import type { ErrorPolicy, RecoveryHandlers } from "./recovery.ts"
import type { Interceptor } from "./interceptor.ts"
import type { BudgetLimitPolicy } from "./budget-policy.ts"
import { isBuiltinToolName } from "./builtin-tools.ts"
import { checkSkillList, checkToolRecord } from "./builder-validation.ts"
import { type AnySkill, isSkill, type SkillImplementation, type SkillPredicate } from "./skill.ts"
import { isToolHandle } from "./tool-handle.ts"
import { memoryTools } from "./memory.ts"
import { type AnyTool, isTool, toolNamePattern } from "./tool.ts"
import { resolveToolChoice, type ResolvedToolChoicePolicy } from "./tool-choice.ts"

/** A skill as the runtime sees it: its allowlisted tools resolved to the registered tools. */
export interface SkillDefinition {
  readonly name: string
  readonly description: string
  readonly tools: ReadonlyArray<AnyTool>
  readonly implementation: SkillImplementation<any, any, any> | undefined
  readonly predicate: SkillPredicate | undefined
  /** Knowledge sources, exposed as argument-less tools on this skill's allowlist only. */
  readonly knowledge: ReadonlyArray<KnowledgeSource>
  /** This skill's output Schema; when undefined the agent's applies. */
  readonly output: Schema.Codec<any, any, never, never> | undefined
  /** The agents this skill may hand the conversation to (`handoff_to_<name>` tools). */
  readonly handoffs: ReadonlyArray<AgentDefinition>
  /** This skill's own memory tools (`skill.memory(...)`); when empty the agent's apply. */
  readonly memory: ReadonlyArray<AnyTool>
  /** The skill's tool-choice policy (`skill.toolChoice(...)`); undefined: the runtime's default. */
  readonly toolChoice?: ResolvedToolChoicePolicy | undefined
}

/** The tool through which a model hands the conversation to agent `name`. */
export const handoffToolName = (name: string): string => `handoff_to_${name.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64)

/** The name of the tool through which a model submits a typed final answer, unless the Schema names another. */
export const submitToolName = "submit"

/** The Schema annotation that renames the typed-answer tool (set by `outputToolName`). */
export const outputToolNameKey = "effect-agent-dsl/outputToolName"

/**
 * The name of the typed-answer tool for an output Schema: the one `outputToolName` gave it, else `submit`.
 *
 * @example
 * ```ts
 * submitToolNameOf(Schema.Struct({ n: Schema.Finite })) // "submit"
 * ```
 */
export const submitToolNameOf = (schema: Schema.Top | undefined): string => {
  const value = (schema?.ast as { annotations?: Record<string, unknown> } | undefined)?.annotations?.[outputToolNameKey]
  return typeof value === "string" ? value : submitToolName
}

/** Everything the runtime needs to run an agent. Build one with `agent(...)`. */
export interface AgentDefinition {
  readonly name: string
  /** Issued once per `agent(...)` call; tool handles carry it so foreign handles are recognised. */
  readonly registry: symbol
  readonly prompt: string | undefined
  readonly model: ModelClient | undefined
  /** Layers from `.provide(...)`, in call order; each run is provided with them (the last outermost). */
  readonly layers: ReadonlyArray<Layer.Layer<any, any, any>>
  readonly budget: Budget
  /** Registered tools, in registration order. */
  readonly tools: ReadonlyArray<AnyTool>
  /**
   * The skills; empty means one implicit skill named after the agent that may use every tool. Skills
   * without a `.when` predicate are chosen by the model when there are several.
   */
  readonly skills: ReadonlyArray<SkillDefinition>
  /** `memory_read`, `memory_write`, `memory_search` when `.memory(...)` was called; on every skill's allowlist. */
  readonly memory: ReadonlyArray<AnyTool>
  /** When set, each model call is offered only the top tools of the allowlist for the input. */
  readonly toolSelection: PickToolsOptions<any> | undefined
  readonly listeners: ReadonlyArray<RegisteredListener>
  /** Distinct thresholds (shares of a limit) that `onBudgetThreshold` listeners wait for. */
  readonly budgetThresholds: ReadonlyArray<number>
  /** Agent-wide recovery defaults (`.recover({...})`). */
  readonly recovery: ErrorPolicy<string, any>
  /** Per-tool recovery handlers (`.recoverTool(name, {...})`), by tool name. */
  readonly toolRecovery: Readonly<Record<string, RecoveryHandlers<string, any>>>
  /** What a call to a tool outside the allowlist (or to no tool at all) does. */
  readonly disallowedToolPolicy: "fail" | "feedback"
  readonly input: Schema.Codec<any, any, never, never> | undefined
  readonly output: Schema.Codec<any, any, never, never> | undefined
  /** Interceptors by tool name, in the order they were added (`.intercept(tool, ...)`). */
  readonly interceptors?: Readonly<Record<string, ReadonlyArray<Interceptor<AnyTool>>>> | undefined
  /** What reaching a countable budget limit does instead of failing (`.budgetPolicy(...)`). */
  readonly budgetPolicy?: BudgetLimitPolicy | undefined
  /** When set, snapshots are signed with it (HMAC) and only snapshots it signed are resumed. */
  readonly snapshotSecret?: string | undefined
  /** The tool-choice policy of the implicit skill of an agent without skills (`.toolChoice(...)`). */
  readonly toolChoice?: ResolvedToolChoicePolicy | undefined
}

/**
 * True when a registered tool, or a handoff target, may wait for a human decision: runs then return
 * `Completed | Suspended` (a handoff target that suspends suspends the run that handed off to it).
 */
export const mayNeedApproval = (definition: AgentDefinition): boolean => {
  // Asked at the end of every run: remembered per definition (definitions are immutable, see `compile`).
  let known = approvalByDefinition.get(definition)
  if (known === undefined) approvalByDefinition.set(definition, known = searchApproval(definition, new Set()))
  return known
}

const approvalByDefinition = new WeakMap<AgentDefinition, boolean>()

const searchApproval = (definition: AgentDefinition, seen: Set<AgentDefinition>): boolean => {
  if (seen.has(definition)) return false
  seen.add(definition)
  return definition.tools.some((t) => t.mayNeedApproval) ||
    definition.skills.some((s) => s.handoffs.some((target) => searchApproval(target, seen)))
}

const configError = (agent: string, reason: string) => new AgentConfigError({ subject: `agent "${agent}"`, reason })

/**
 * Adds tools to a definition, refusing what is not a record of tools (an array, a Map, one tool),
 * non-tools, keys that are not the tool's name, and duplicate names.
 */
export const registerTools = (definition: AgentDefinition, tools: Record<string, unknown>): ReadonlyArray<AnyTool> => {
  checkToolRecord(`agent "${definition.name}"`, tools)
  const registered = [...definition.tools]
  const names = new Set(registered.map((t) => t.name))
  for (const [key, candidate] of Object.entries(tools)) {
    if (!isTool(candidate)) throw configError(definition.name, `"${key}" is not a tool built with tool(...)`)
    if (candidate.name !== key) {
      throw configError(definition.name, `the tool "${candidate.name}" is registered under the key "${key}"; use its name as the key`)
    }
    if (definition.output !== undefined && candidate.name === submitToolNameOf(definition.output)) {
      throw configError(definition.name, `"${candidate.name}" is the tool through which the model submits the typed answer`)
    }
    if (isReservedName(candidate.name)) {
      throw configError(definition.name, `"${candidate.name}" is a reserved name (memory_* belongs to .memory(); escalate and throwException are built in)`)
    }
    if (names.has(candidate.name)) {
      throw configError(definition.name, `a tool named "${candidate.name}" is already registered`)
    }
    names.add(candidate.name)
    registered.push(candidate)
  }
  return registered
}

/**
 * Resolves skills against the registered tools. Refuses a result that is not a non-empty array (an
 * empty one would leave the implicit skill, which may use every tool), values that are not skills,
 * handles issued by another agent, tools that are not registered, duplicate skill names, skills with
 * nothing (not even an empty `.tools()`) nor an implementation (or with both), and ambiguous routing.
 */
export const resolveSkills = (definition: AgentDefinition, skills: ReadonlyArray<unknown>): ReadonlyArray<SkillDefinition> => {
  checkSkillList(`agent "${definition.name}"`, skills)
  const resolved = [...definition.skills]
  if (definition.toolChoice !== undefined && skills.length > 0) {
    throw configError(definition.name, "the agent's .toolChoice(...) is for an agent without skills: give each skill its own skill(...).toolChoice(...)")
  }
  for (const candidate of skills) {
    if (!isSkill(candidate)) throw configError(definition.name, "`.skills(...)` must return skills built with skill(...)")
    if (resolved.some((s) => s.name === candidate.name)) {
      throw configError(definition.name, `two skills are named "${candidate.name}"`)
    }
    resolved.push(resolveSkill(definition, candidate))
  }
  return resolved
}

/** Names no tool or knowledge source may take: the memory tools' prefix and the built-in tools. */
export const isReservedName = (name: string): boolean => name.startsWith("memory_") || isBuiltinToolName(name)

const resolveSkill = (definition: AgentDefinition, candidate: AnySkill): SkillDefinition => {
  const fail = (reason: string) =>
    new AgentConfigError({ subject: `skill "${candidate.name}" of agent "${definition.name}"`, reason })
  const talks = candidate.chatOnly || candidate.memoryStore !== undefined
  if (
    candidate.handles.length === 0 && candidate.knowledgeSources.length === 0 && candidate.handoffTargets.length === 0 &&
    candidate.implementation === undefined && !talks
  ) {
    throw fail("it has neither tools nor an implementation: add .tools(...), .knowledge(...), .handoffs(...), .implementedBy(...), or .chat() (or an empty .tools()) for a skill that only talks to the model")
  }
  if (talks && candidate.implementation !== undefined) {
    throw fail("a deterministic skill (.implementedBy) never calls a model: it cannot be .chat() nor have .memory(...)")
  }
  if (candidate.handles.length > 0 && candidate.implementation !== undefined) {
    throw fail("it has both tools and an implementation: a deterministic skill never calls a model")
  }
  const tools: Array<AnyTool> = []
  for (const handle of candidate.handles as ReadonlyArray<unknown>) {
    if (!isToolHandle(handle)) {
      throw fail("skill tools must be the handles passed to .skills(handles => ...), not tools or names")
    }
    const registered = definition.tools.find((t) => t.name === handle.tool.name)
    if (handle.registry !== definition.registry || registered !== handle.tool) {
      throw fail(`the handle for "${handle.tool.name}" belongs to another agent`)
    }
    if (!tools.includes(registered)) tools.push(registered)
  }
  const output = candidate.outputSchema ?? definition.output
  const submitName = submitToolNameOf(output)
  const names = new Set(tools.map((t) => t.name))
  for (const source of candidate.knowledgeSources) {
    if (candidate.implementation !== undefined) throw fail("knowledge needs an agentic skill (with tools), not an implementation")
    if (!toolNamePattern.test(source.name)) throw fail(`knowledge "${source.name}": a name must be 1-64 letters, digits, '_' or '-'`)
    if (typeof source.load !== "function") throw fail(`knowledge "${source.name}": the loader must be a function`)
    if (names.has(source.name) || isReservedName(source.name) || (output !== undefined && source.name === submitName)) {
      throw fail(`knowledge "${source.name}" has the name of another tool of the skill, or a reserved one`)
    }
    names.add(source.name)
  }
  const handoffs: Array<AgentDefinition> = []
  for (const target of candidate.handoffTargets as ReadonlyArray<unknown>) {
    if (candidate.implementation !== undefined) throw fail("handoffs need an agentic skill, not an implementation")
    if (typeof target !== "object" || target === null || !(AgentDefinitionKey in target)) {
      throw fail("handoffs(...) takes agents built with agent(...)")
    }
    const targetDefinition = (target as { readonly [AgentDefinitionKey]: AgentDefinition })[AgentDefinitionKey]
    if (targetDefinition.registry === definition.registry) throw fail("an agent cannot hand off to itself")
    const toolName = handoffToolName(targetDefinition.name)
    if (names.has(toolName)) throw fail(`two handoffs (or a tool) would be named "${toolName}"`)
    names.add(toolName)
    handoffs.push(targetDefinition)
  }
  if (output !== undefined && names.has(submitName)) {
    throw fail(`"${submitName}" is the tool through which the model submits the typed answer`)
  }
  const toolChoice = candidate.toolChoicePolicy === undefined ? undefined : resolveToolChoice(
    `skill "${candidate.name}" of agent "${definition.name}"`,
    candidate.toolChoicePolicy,
    { allowed: tools.map((t) => t.name), typed: output !== undefined, registry: definition.registry }
  )
  if (toolChoice !== undefined && candidate.implementation !== undefined) {
    throw fail("a deterministic skill (.implementedBy) never calls a model: it cannot have a .toolChoice(...)")
  }
  return Object.freeze({
    name: candidate.name,
    description: candidate.description,
    tools: Object.freeze(tools),
    implementation: candidate.implementation,
    predicate: candidate.predicate,
    knowledge: Object.freeze([...candidate.knowledgeSources]),
    output: candidate.outputSchema,
    handoffs: Object.freeze(handoffs),
    memory: candidate.memoryStore === undefined ? [] : memoryTools(candidate.memoryStore),
    toolChoice
  })
}

/** Where a builder keeps its definition: a registered symbol, so it stays out of completions and JSON. */
export const AgentDefinitionKey: unique symbol = Symbol.for("effect-agent-dsl/AgentDefinition")

/**
 * Internal: the definition behind a builder, for the runtime and the test harness. Anything else
 * (what plain JavaScript may pass where an agent is expected: a name, `undefined`, a tool) is an
 * `AgentConfigError` saying so, not a `TypeError` from inside.
 *
 * @example
 * ```ts
 * definitionOf(agent("a").prompt("be brief")).prompt // "be brief"
 * definitionOf("bot" as never) // throws AgentConfigError: Invalid argument: expected an agent built with agent(...), got "bot"
 * ```
 */
export const definitionOf = (builder: { readonly [AgentDefinitionKey]: AgentDefinition }): AgentDefinition => {
  const definition = typeof builder === "object" && builder !== null ? builder[AgentDefinitionKey] : undefined
  if (definition === undefined) throw new AgentConfigError({ subject: "argument", reason: `expected an agent built with agent(...), got ${shownValue(builder)}` })
  return definition
}
