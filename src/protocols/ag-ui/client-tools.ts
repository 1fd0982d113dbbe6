/**
 * The client's own tools (`RunAgentInput.tools`) as tools of the run. The model sees them like any
 * other tool (name, description, the client's JSON Schema, which also validates every call), but a
 * call never runs on the server: each call waits for a decision (`needsApproval`), so the run stops
 * there with the call pending and the stream finishes with `pendingToolCallIds` for the client to run
 * it. The client sends the result as a tool message in its next input; that input resumes the stored
 * run with an approval for the call, and the tool "runs" by handing the model exactly what the client
 * returned.
 */
import { type AnyTool, tool } from "../../dsl/tool.ts"
import type { JsonSchemaObject } from "../../model/messages.ts"
import { agUiInvalid } from "./errors.ts"
import type { ClientToolSpec } from "./run-agent-input.ts"

/**
 * Tools for the client's tools, keyed by name, answering with `results` (by tool call id); throws
 * `AgUiInputInvalid` for a name or JSON Schema a tool cannot have.
 *
 * @example
 * ```ts
 * const run = fromRunAgentInput(body)
 * const withClientTools = assistant.tools(clientTools(run.clientTools, run.toolResults))
 * ```
 */
export const clientTools = (specs: ReadonlyArray<ClientToolSpec>, results: ReadonlyMap<string, string>): Record<string, AnyTool> => {
  const tools: Record<string, AnyTool> = {}
  for (const spec of specs) {
    if (Object.hasOwn(tools, spec.name)) throw agUiInvalid(`the client tool "${spec.name}" is offered twice`)
    try {
      tools[spec.name] = tool(spec.name, {
        ...(spec.description === undefined ? {} : { description: spec.description }),
        parameters: spec.parameters as JsonSchemaObject,
        needsApproval: true,
        run: (_args: unknown, context) => results.get(context.toolCallId) ?? "(the client sent no result)"
      })
    } catch (error) {
      throw agUiInvalid(`the client tool "${spec.name}" cannot be a tool: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return tools
}
