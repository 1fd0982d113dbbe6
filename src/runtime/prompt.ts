/**
 * What the model reads: the system prompt (the agent's prompt, the chosen skill and its tools, the
 * output contract) and the textual form of inputs, tool results and corrections.
 */
import { Schema } from "effect"
import type { AgentDefinition, SkillDefinition } from "../dsl/agent-definition.ts"
import { describeCause } from "../errors.ts"

/** The system prompt for a run of `skill`. Lists only the skill's own tools. */
export const systemPrompt = (definition: AgentDefinition, skill: SkillDefinition): string => {
  const parts = [definition.prompt ?? `You are ${definition.name}.`]
  const description = skill.description === "" ? "" : `: ${skill.description}`
  parts.push(`Current skill: ${skill.name}${description}`)
  if (skill.tools.length === 0) {
    parts.push("No tools are available; answer directly.")
  } else {
    const lines = skill.tools.map((t) => `- ${t.name}${t.description === undefined ? "" : `: ${t.description}`}`)
    parts.push(`Tools you may call:\n${lines.join("\n")}`)
  }
  if (definition.output !== undefined) {
    parts.push(`When you give the final answer, reply with only JSON matching this JSON Schema:\n${outputJsonSchema(definition)}`)
  }
  return parts.join("\n\n")
}

const outputJsonSchema = (definition: AgentDefinition): string =>
  definition.output === undefined ? "" : JSON.stringify(Schema.toJsonSchemaDocument(definition.output).schema)

/** The text a tool result is sent back as: strings as they are, anything else as JSON. */
export const toolResultContent = (value: unknown): string => {
  if (typeof value === "string") return value
  try {
    return JSON.stringify(value) ?? "null"
  } catch (error) {
    return `(unserialisable result: ${describeCause(error)})`
  }
}

/** The tool result the model gets when its arguments did not decode. */
export const invalidArgsFeedback = (tool: string, issues: string): string =>
  `Invalid arguments for tool "${tool}":\n${issues}\nCall the tool again with arguments that match its parameters.`

/** The tool result the model gets when the tool failed. */
export const toolFailedFeedback = (tool: string, error: unknown): string =>
  `Error: tool "${tool}" failed: ${describeCause(error)}`

/** The correction sent when the model's reply was empty. */
export const emptyReplyFeedback = "Your reply was empty. Call one of the tools or give the final answer."

/** The correction sent when the final answer did not decode into the output Schema. */
export const outputFeedback = (issues: string): string =>
  `Your final answer does not match the required output format:\n${issues}\nReply again with only the JSON value.`
