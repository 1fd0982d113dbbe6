/**
 * The fingerprint of an agent definition: a hash of what a run's state depends on (the agent's name,
 * its tools' names and parameter JSON Schemas, its skills with their tool lists, knowledge and output
 * Schemas, tool-choice policies and typed-answer tool names, its budget). A snapshot stores it; continuing a run with a definition whose fingerprint
 * differs fails with `DefinitionChanged` instead of running a transcript against the wrong tools.
 * Prompts, hooks and recovery handlers are left out: changing them between two steps is allowed.
 */
import * as Schema from "effect/Schema"
import { type AgentDefinition, type SkillDefinition, submitToolName, submitToolNameOf } from "../dsl/agent-definition.ts"

const jsonSchemaOf = (schema: Schema.Top | undefined): unknown => {
  if (schema === undefined) return null
  try {
    return Schema.toJsonSchemaDocument(schema).schema
  } catch {
    return "(no JSON Schema)"
  }
}

/** The canonical description that is hashed; exported for tests and error messages. */
export const fingerprintSource = (definition: AgentDefinition, skills: ReadonlyArray<SkillDefinition>): string =>
  JSON.stringify({
    agent: definition.name,
    tools: [...definition.tools, ...definition.memory].map((t) => ({
      name: t.name,
      parameters: t.definition.parameters,
      // Only when set, so fingerprints of agents without approvals stay as they were.
      ...(t.mayNeedApproval ? { approval: true } : {})
    })),
    skills: skills.map((s) => ({
      name: s.name,
      tools: s.tools.map((t) => t.name),
      knowledge: s.knowledge.map((k) => k.name),
      ...(s.handoffs.length === 0 ? {} : { handoffs: s.handoffs.map((h) => h.name) }),
      deterministic: s.implementation !== undefined,
      output: jsonSchemaOf(s.output),
      // Only when set, so fingerprints from before tool-choice policies and renamed answer tools stay as they were.
      ...(s.toolChoice === undefined ? {} : { toolChoice: s.toolChoice }),
      ...(submitToolNameOf(s.output ?? definition.output) === submitToolName ? {} : { submitTool: submitToolNameOf(s.output ?? definition.output) })
    })),
    output: jsonSchemaOf(definition.output),
    input: jsonSchemaOf(definition.input),
    budget: Object.fromEntries(Object.entries(definition.budget).filter(([k]) => !notShape.has(k)).map(([k, v]) => [k, Number.isFinite(v) ? v : "unlimited"]))
  })

/** Budget options that do not change what a snapshot means (and were added after snapshots existed). */
const notShape: ReadonlySet<string> = new Set(["hookTimeout", "maxToolArgsBytes", "toolConcurrency"])

/** A 53-bit hash (cyrb53) of the text, as 14 hex digits: stable across processes and platforms. */
export const hash53 = (text: string): string => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0")
}

/** The fingerprint of a definition (with its skills as the runtime sees them). */
export const fingerprintOf = (definition: AgentDefinition, skills: ReadonlyArray<SkillDefinition>): string =>
  hash53(fingerprintSource(definition, skills))
