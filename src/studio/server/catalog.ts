/**
 * The agents and composites a studio can run, found among a module's exports, and what the playground
 * shows of each: skills with their allowlists, tools with their JSON Schema, effect class and approval
 * policy, budgets, model and input Schema. Only these can be run from the studio's pages.
 */
import * as Schema from "effect/Schema"
import { AgentDefinitionKey, type AgentDefinition } from "../../dsl/agent-definition.ts"
import { type AnyTool, ToolInternals } from "../../dsl/tool.ts"
import type { AnyComposite } from "../../compose/composite.ts"
import type { AgentInfo, BudgetInfo, ToolInfo } from "./api.ts"

/** A runnable value: an agent builder or a composite. */
export interface Runnable {
  readonly name: string
  runEffect(input: unknown): any
  resume?(snapshot: unknown, decisions: unknown): any
}

/** One entry of the catalog. */
export interface CatalogEntry {
  readonly info: AgentInfo
  readonly runnable: Runnable
  /** Every tool of the entry's tree, by name (for approval forms). */
  readonly tools: ReadonlyMap<string, AnyTool>
  /** The input as the run takes it, from its JSON form (the input Schema's JSON codec); issues when it does not decode. */
  readonly decodeInput: (json: unknown) => { readonly value: unknown } | { readonly issues: string }
}

const decoderOf = (schema: Schema.Top | undefined): CatalogEntry["decodeInput"] => {
  // Without an input Schema a run takes text, as `inputJsonSchema` ({ type: "string" }) tells the page.
  if (schema === undefined) {
    return (json) => (typeof json === "string" ? { value: json } : { issues: `Expected string, got ${json === null ? "null" : Array.isArray(json) ? "an array" : typeof json}: this agent takes text` })
  }
  const decode = Schema.decodeUnknownExit(Schema.toCodecJson(schema as Schema.Codec<unknown, unknown>))
  return (json) => {
    const exit = decode(json, { errors: "all" })
    if (exit._tag === "Success") return { value: exit.value }
    const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
    return { issues: failure?._tag === "Fail" ? String((failure.error as { message?: unknown }).message) : "the input does not decode" }
  }
}

/** True for an agent builder (`agent(...)`). */
export const isAgentBuilder = (value: unknown): value is Runnable & { readonly [AgentDefinitionKey]: AgentDefinition } =>
  (typeof value === "object" || typeof value === "function") && value !== null && AgentDefinitionKey in value

/** True for a composite (`pipeline`, `parallel`, `forum`, `loop`, `branch`). */
export const isComposite = (value: unknown): value is AnyComposite =>
  typeof value === "object" && value !== null && (value as { _tag?: unknown })._tag === "Composite" &&
  typeof (value as { runEffect?: unknown }).runEffect === "function"

const finiteOrNull = (n: number): number | null => (Number.isFinite(n) ? n : null)

const approvalOf = (tool: AnyTool): ToolInfo["approval"] => {
  if (!tool.mayNeedApproval) return "never"
  // `needsApproval: true` compiles to an argument-less predicate; a user's predicate is wrapped in one of (args, context).
  const predicate = tool[ToolInternals].needsApproval
  return predicate !== undefined && predicate.length === 0 ? "always" : "conditional"
}

const toolInfo = (tool: AnyTool): ToolInfo => ({
  name: tool.name,
  description: tool.description,
  jsonSchema: tool.definition.parameters,
  effect: tool.effect,
  approval: approvalOf(tool)
})

const jsonSchemaOf = (schema: Schema.Top | undefined): unknown => {
  if (schema === undefined) return { type: "string" }
  try {
    return Schema.toJsonSchemaDocument(schema).schema
  } catch {
    return {}
  }
}

const budgetOf = (definition: AgentDefinition): BudgetInfo => ({
  maxTurns: finiteOrNull(definition.budget.maxTurns),
  maxToolCalls: finiteOrNull(definition.budget.maxToolCalls),
  maxTokens: finiteOrNull(definition.budget.maxTokens),
  maxDuration: finiteOrNull(definition.budget.maxDuration),
  perToolTimeout: finiteOrNull(definition.budget.perToolTimeout),
  maxConsecutiveSameTool: finiteOrNull(definition.budget.maxConsecutiveSameTool)
})

const modelOf = (definition: AgentDefinition): string | undefined => {
  const model = definition.model
  if (model === undefined) return undefined
  const { provider, model: name } = model.metadata ?? {}
  return [provider, name].filter((s) => s !== undefined).join("/") || "custom ModelClient"
}

/** Every tool of an agent, its skills' knowledge and memory tools aside. */
const agentTools = (definition: AgentDefinition): ReadonlyArray<AnyTool> => [...definition.tools, ...definition.memory]

const agentEntry = (id: string, builder: Runnable & { readonly [AgentDefinitionKey]: AgentDefinition }): CatalogEntry => {
  const definition = builder[AgentDefinitionKey]
  const tools = agentTools(definition)
  const skills = definition.skills.length === 0
    ? [{ name: definition.name, description: definition.prompt ?? "", tools: tools.map((t) => t.name) }]
    : definition.skills.map((s) => ({ name: s.name, description: s.description, tools: [...s.tools, ...s.memory].map((t) => t.name).concat(definition.memory.map((t) => t.name)) }))
  return {
    info: {
      id,
      name: definition.name,
      kind: "agent",
      description: definition.prompt,
      model: modelOf(definition),
      budgets: budgetOf(definition),
      skills,
      tools: tools.map(toolInfo),
      inputJsonSchema: jsonSchemaOf(definition.input)
    },
    runnable: builder,
    tools: new Map(tools.map((t) => [t.name, t])),
    decodeInput: decoderOf(definition.input)
  }
}

/** The agents under a composite, depth first. */
const membersOf = (composite: AnyComposite, seen = new Set<unknown>()): ReadonlyArray<AgentDefinition> => {
  if (seen.has(composite)) return []
  seen.add(composite)
  return composite.children.flatMap((child) =>
    isAgentBuilder(child) ? [child[AgentDefinitionKey]] : isComposite(child) ? membersOf(child, seen) : []
  )
}

const compositeEntry = (id: string, composite: AnyComposite): CatalogEntry => {
  const members = membersOf(composite)
  const tools = new Map<string, AnyTool>()
  for (const member of members) for (const tool of agentTools(member)) if (!tools.has(tool.name)) tools.set(tool.name, tool)
  const first = composite.children[0]
  return {
    info: {
      id,
      name: composite.name,
      kind: "composite",
      description: `${composite.kind} of ${composite.children.map((c) => c.name).join(", ")}`,
      model: undefined,
      budgets: {},
      skills: members.map((m) => ({ name: m.name, description: m.prompt ?? "", tools: agentTools(m).map((t) => t.name) })),
      tools: [...tools.values()].map(toolInfo),
      inputJsonSchema: isAgentBuilder(first) ? jsonSchemaOf(first[AgentDefinitionKey].input) : { type: "string" },
      members: composite.children.map((c) => c.name)
    },
    runnable: composite as Runnable,
    tools,
    decodeInput: decoderOf(isAgentBuilder(first) ? first[AgentDefinitionKey].input : undefined)
  }
}

/**
 * The catalog of a module's exports: every export that is an agent or a composite, keyed by export
 * name (`default` kept as is). Other exports are ignored.
 *
 * @example
 * ```ts
 * const catalog = catalogOf(await import("./agents.ts"))
 * catalog.get("calculator")?.info.tools.map((t) => t.name)
 * ```
 */
export const catalogOf = (exports: Readonly<Record<string, unknown>>): ReadonlyMap<string, CatalogEntry> => {
  const entries = new Map<string, CatalogEntry>()
  for (const [id, value] of Object.entries(exports)) {
    if (isAgentBuilder(value)) entries.set(id, agentEntry(id, value))
    else if (isComposite(value)) entries.set(id, compositeEntry(id, value))
  }
  return entries
}
