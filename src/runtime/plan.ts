/**
 * The compiled plan of an agent: what every run of one definition shares, computed once per
 * definition (definitions are frozen, so the plan is cached by identity). Per skill: the table of
 * executable tools, knowledge sources and terminal tools by name, what a model may be offered, the
 * allowlist and the output contract; for the agent: listeners indexed by event tag, the budget spec and
 * thresholds, the recovery bounds, and the definition's fingerprint (for snapshots).
 */
import * as Schema from "effect/Schema"
import type { AgentDefinition, SkillDefinition } from "../dsl/agent-definition.ts"
import type { Budget } from "../dsl/budget.ts"
import { isBuiltinToolName } from "../dsl/builtin-tools.ts"
import type { AgentEvent, Listener } from "../dsl/events.ts"
import type { KnowledgeSource } from "../dsl/knowledge.ts"
import { type AnyTool, tool } from "../dsl/tool.ts"
import type { ToolDefinition } from "../model/messages.ts"
import { fingerprintOf } from "./fingerprint.ts"
import { type OutputContract, outputContract } from "./output-contract.ts"
import { builtinTerminals, handoffTerminal, submitTerminal, type Terminal } from "./terminal.ts"

/** One skill, compiled. */
export interface SkillPlan {
  readonly name: string
  readonly description: string
  readonly definition: SkillDefinition
  /** Executable tools by name: the skill's own (built-ins excluded), the memory tools, the knowledge tools. */
  readonly tools: ReadonlyMap<string, AnyTool>
  /** Knowledge sources by tool name: their results are cached per run. */
  readonly knowledge: ReadonlyMap<string, KnowledgeSource>
  /** Knowledge loaded when the run starts, into the system prompt. */
  readonly preloaded: ReadonlyArray<KnowledgeSource>
  /** Calls that end the run: the built-ins the skill lists, and `submit` when the answer is typed. */
  readonly terminals: ReadonlyMap<string, Terminal>
  /** What a model may be offered, in order (built-ins the skill lists included). */
  readonly offerable: ReadonlyArray<AnyTool>
  /** Every name the model may call, for `ToolNotAllowed`: never the agent's other tools. */
  readonly allowed: ReadonlyArray<string>
  readonly output: OutputContract | undefined
  readonly submit: Terminal | undefined
  /** The tool definitions of a model request offering every offerable tool: theirs, then `submit` when typed (frozen, shared by the runs). */
  readonly requestTools: ReadonlyArray<ToolDefinition>
}

/** An agent, compiled. */
export interface AgentPlan {
  readonly name: string
  readonly definition: AgentDefinition
  /** The declared skills, or the implicit one (named after the agent) when none were declared. */
  readonly skills: ReadonlyArray<SkillPlan>
  readonly implicitSkill: boolean
  readonly skillByName: ReadonlyMap<string, SkillPlan>
  /** Listeners by event tag, in registration order, `onEvent` listeners merged in. */
  readonly listeners: ReadonlyMap<AgentEvent["_tag"], ReadonlyArray<Listener<any>>>
  readonly budget: Budget
  readonly thresholds: ReadonlyArray<number>
  /** The bound on `fixed` steps per call. */
  readonly maxRepairSteps: number
  /** Identifies the definition's shape (see `fingerprint.ts`); stored in snapshots. Computed on first use. */
  readonly fingerprint: () => string
}

const plans = new WeakMap<AgentDefinition, AgentPlan>()

/** The plan of `definition`, compiled on first use. */
export const compile = (definition: AgentDefinition): AgentPlan => {
  const cached = plans.get(definition)
  if (cached !== undefined) return cached
  const plan = compileUncached(definition)
  plans.set(definition, plan)
  return plan
}

// A record, so an event added to the union without a row here is a compile error (not a hook never called).
const eventTagRecord: { readonly [K in AgentEvent["_tag"]]: true } = {
  RunStart: true, SkillChosen: true, Turn: true, ModelCall: true, Retrying: true, ModelResponse: true, ToolUse: true, ToolProgress: true, ToolError: true,
  InvalidArgs: true, ToolHallucinated: true, ArgsRepaired: true, KnowledgeUsed: true, Handoff: true, ApprovalRequested: true, ApprovalDecided: true, BudgetThreshold: true,
  BudgetExceeded: true, RunEnd: true, HookFailed: true
}
const eventTags = Object.keys(eventTagRecord) as ReadonlyArray<AgentEvent["_tag"]>

const compileUncached = (definition: AgentDefinition): AgentPlan => {
  const implicitSkill = definition.skills.length === 0
  const skillDefinitions: ReadonlyArray<SkillDefinition> = implicitSkill
    ? [{
      name: definition.name,
      description: "",
      // Built-in tools are callable only in skills that list them.
      tools: definition.tools.filter((t) => !isBuiltinToolName(t.name)),
      implementation: undefined,
      predicate: undefined,
      knowledge: [],
      memory: [],
      output: undefined,
      handoffs: [],
      toolChoice: definition.toolChoice
    }]
    : definition.skills
  const skills = skillDefinitions.map((skill) => compileSkill(definition, skill))
  const listeners = new Map<AgentEvent["_tag"], ReadonlyArray<Listener<any>>>()
  for (const tag of eventTags) {
    const forTag = definition.listeners.filter((l) => l.event === tag || l.event === "*").map((l) => l.listener)
    if (forTag.length > 0) listeners.set(tag, forTag)
  }
  return Object.freeze({
    name: definition.name,
    definition,
    skills,
    implicitSkill,
    skillByName: new Map(skills.map((s) => [s.name, s])),
    listeners,
    budget: definition.budget,
    thresholds: definition.budgetThresholds,
    maxRepairSteps: Math.max(1, Math.floor(definition.recovery.maxRepairSteps ?? 3)),
    fingerprint: lazily(() => fingerprintOf(definition, skillDefinitions))
  })
}

const compileSkill = (definition: AgentDefinition, skill: SkillDefinition): SkillPlan => {
  const onDemand = skill.knowledge.filter((k) => k.preload !== true)
  const knowledgeTools = onDemand.map(knowledgeTool)
  const memory = skill.memory.length > 0 ? skill.memory : definition.memory
  const handoffs = skill.handoffs.map(handoffTerminal)
  const offerable = [...skill.tools, ...memory, ...knowledgeTools, ...handoffs.map((h) => h.tool)]
  const outputSchema = skill.output ?? definition.output
  const output = outputSchema === undefined ? undefined : outputContract(outputSchema, { hasTools: offerable.length > 0 })
  const generic = output === undefined ? undefined : submitTerminal(output)
  // The typed-answer tool keeps the name its Schema gave it (`outputToolName`).
  const submit = generic === undefined || output?.submitTool === undefined ? generic : { ...generic, name: output.submitTool.name }
  const terminals = new Map<string, Terminal>()
  for (const t of skill.tools) {
    const builtin = builtinTerminals.get(t.name)
    if (builtin !== undefined) terminals.set(t.name, builtin)
  }
  for (const handoff of handoffs) terminals.set(handoff.terminal.name, handoff.terminal)
  if (submit !== undefined) terminals.set(submit.name, submit)
  const names = offerable.map((t) => t.name)
  return Object.freeze({
    name: skill.name,
    description: skill.description,
    definition: skill,
    tools: new Map(offerable.filter((t) => !terminals.has(t.name)).map((t) => [t.name, t])),
    knowledge: new Map(onDemand.map((k) => [k.name, k])),
    preloaded: skill.knowledge.filter((k) => k.preload === true),
    terminals,
    offerable,
    allowed: submit === undefined ? names : [...names, submit.name],
    output,
    submit,
    requestTools: Object.freeze(submit === undefined ? offerable.map((t) => t.definition) : [...offerable.map((t) => t.definition), submit.definition])
  })
}

/** A knowledge source as a tool without arguments; the run context caches what it loads. */
const knowledgeTool = (source: KnowledgeSource): AnyTool =>
  tool(source.name, { description: source.description, args: Schema.Struct({}), effect: "readOnly", run: (_, context) => source.load(context) })

const lazily = <A>(compute: () => A): (() => A) => {
  let value: { readonly a: A } | undefined
  return () => (value ??= { a: compute() }).a
}
