/**
 * The Agent Card of an agent served over A2A: its name, a description (the option, else the prompt),
 * one A2A skill per skill of ours (or one for the agent when it has none), the input and output modes
 * its Schemas allow, streaming, and the JSON-RPC interface on A2A 1.0 and 0.3 (the SDK's compatibility
 * layer answers 0.3 clients on the same URL). With a bearer check, the card declares a `bearer`
 * HTTP security scheme and requires it.
 */
import type { AgentCard, AgentSkill } from "@a2a-js/sdk"
import type { AgentDefinition } from "../../dsl/agent-definition.ts"

/** What the card says beyond what the definition gives. */
export interface AgentCardOptions {
  /** The JSON-RPC endpoint clients post to (`http://127.0.0.1:4100/a2a/jsonrpc`). */
  readonly url: string
  /** Default: the agent's prompt, else `Agent "<name>"`. */
  readonly description?: string
  /** Default: "0.1.0". */
  readonly version?: string
  readonly provider?: { readonly organization: string; readonly url: string }
  /** Declare the `bearer` security scheme and require it. */
  readonly bearer?: boolean
}

/** What the card is made from: an agent's definition, or the name of a runnable (no Schemas, no skills). */
export type CardSource = Pick<AgentDefinition, "name" | "prompt" | "input" | "output" | "skills" | "tools">

const modesOf = (schema: unknown): Array<string> => (schema === undefined ? ["text/plain"] : ["application/json", "text/plain"])

/**
 * The card of `definition` served at `options.url`.
 *
 * @example
 * ```ts
 * const card = agentCardOf(definitionOf(helper), { url: "http://127.0.0.1:4100/a2a/jsonrpc" })
 * ```
 */
export const agentCardOf = (definition: CardSource, options: AgentCardOptions): AgentCard => {
  const inputModes = modesOf(definition.input)
  const outputModes = definition.output === undefined ? ["text/plain"] : ["application/json"]
  const skills: Array<AgentSkill> = definition.skills.length === 0
    ? [{
      id: definition.name,
      name: definition.name,
      description: options.description ?? definition.prompt ?? `Agent "${definition.name}"`,
      tags: definition.tools.map((t) => t.name),
      examples: [],
      inputModes,
      outputModes,
      securityRequirements: []
    }]
    : definition.skills.map((skill) => ({
      id: skill.name,
      name: skill.name,
      description: skill.description,
      tags: skill.tools.map((t) => t.name),
      examples: [],
      inputModes,
      outputModes: skill.output === undefined ? outputModes : ["application/json"],
      securityRequirements: []
    }))
  return {
    name: definition.name,
    description: options.description ?? definition.prompt ?? `Agent "${definition.name}"`,
    supportedInterfaces: [
      { url: options.url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url: options.url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" }
    ],
    provider: options.provider === undefined ? undefined : { organization: options.provider.organization, url: options.provider.url },
    version: options.version ?? "0.1.0",
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: options.bearer === true
      ? { bearer: { scheme: { $case: "httpAuthSecurityScheme", value: { description: "A bearer token", scheme: "Bearer", bearerFormat: "" } } } }
      : {},
    securityRequirements: options.bearer === true ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: inputModes,
    defaultOutputModes: outputModes,
    skills,
    signatures: []
  }
}
