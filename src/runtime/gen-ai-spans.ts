/**
 * The OpenTelemetry GenAI semantic conventions (`gen_ai.*`, semconv 1.37+) as our spans speak them:
 * a run is an `invoke_agent {agent}` span, a model call a `chat {model}` span of kind CLIENT, a tool
 * call an `execute_tool {tool}` span. Langfuse, Arize Phoenix, Datadog and Effect's own `effect/ai`
 * telemetry read these names; our richer attributes (`agent.*`, `model.*`, `tool.*`: skill, turn,
 * budget, recovery, run id) sit beside them. Only span names and attribute records live here: the
 * loop decides when a span is made (`tracing.ts`: only when someone can see it).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { FinishReason, LlmResponse, ModelRequest, ToolCall } from "../model/messages.ts"
import type { ModelMetadata } from "../model/model-client.ts"
import { errorTypeOf } from "../internal/error-type.ts"

export { errorTypeOf }

/** Attribute keys of the GenAI conventions we write (the values of `ATTR_GEN_AI_*` in `@opentelemetry/semantic-conventions/incubating`). */
export const GenAi = {
  operation: "gen_ai.operation.name",
  provider: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  conversationId: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  temperature: "gen_ai.request.temperature",
  maxTokens: "gen_ai.request.max_tokens",
  outputType: "gen_ai.output.type",
  stream: "gen_ai.request.stream",
  finishReasons: "gen_ai.response.finish_reasons",
  responseId: "gen_ai.response.id",
  responseModel: "gen_ai.response.model",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolDescription: "gen_ai.tool.description",
  errorType: "error.type"
} as const

/**
 * The conversation a run belongs to, reported as `gen_ai.conversation.id`: a session's id while it
 * runs a send (`session(agent, "user-42")`); unset otherwise.
 *
 * @example
 * ```ts
 * program.pipe(Effect.provideService(CurrentConversation, "support-ticket-981"))
 * ```
 */
export const CurrentConversation = Context.Reference<string | undefined>("effect-agent-dsl/CurrentConversation", {
  defaultValue: () => undefined
})

/** The `invoke_agent` span of a run: in-process, so INTERNAL. */
export const agentSpan = (name: string, model: ModelMetadata | undefined, conversationId: string | undefined) => ({
  name: `invoke_agent ${name}`,
  options: {
    kind: "internal" as const,
    attributes: {
      [GenAi.operation]: "invoke_agent",
      [GenAi.agentName]: name,
      ...(model?.provider === undefined ? {} : { [GenAi.provider]: model.provider }),
      ...(model?.model === undefined ? {} : { [GenAi.requestModel]: model.model }),
      ...(conversationId === undefined ? {} : { [GenAi.conversationId]: conversationId }),
      "agent.name": name
    },
    captureStackTrace: false
  }
})

/**
 * The `chat` span of a model call: a call to a remote service, so CLIENT. Named after the model when
 * the client says which. `streaming`: the call reads the client's stream (`gen_ai.request.stream`,
 * which the conventions require on a streaming request and only there).
 */
export const chatSpan = (turn: number, request: ModelRequest, model: ModelMetadata | undefined, streaming = false) => {
  const temperature = request.temperature ?? model?.temperature
  return {
    name: model?.model === undefined ? "chat" : `chat ${model.model}`,
    options: {
      kind: "client" as const,
      attributes: {
        [GenAi.operation]: "chat",
        ...(model?.provider === undefined ? {} : { [GenAi.provider]: model.provider }),
        ...(model?.model === undefined ? {} : { [GenAi.requestModel]: model.model }),
        ...(temperature === undefined ? {} : { [GenAi.temperature]: temperature }),
        ...(model?.maxTokens === undefined ? {} : { [GenAi.maxTokens]: model.maxTokens }),
        // A request for a JSON answer (native structured output), with a schema or not, is `json`.
        ...(request.responseFormat === undefined ? {} : { [GenAi.outputType]: "json" }),
        ...(streaming ? { [GenAi.stream]: true } : {}),
        "agent.turn": turn,
        "model.tools": request.tools.length,
        ...(request.toolChoice === undefined
          ? {}
          : { "model.tool_choice": typeof request.toolChoice === "string" ? request.toolChoice : request.toolChoice.tool })
      },
      captureStackTrace: false
    }
  }
}

/**
 * Why the model stopped: the provider's finish reason, else what the answer shows (tool calls, or a
 * text that ended).
 */
export const finishReasonOf = (response: LlmResponse): FinishReason =>
  response.finishReason ?? (response._tag === "ToolCalls" ? "tool-calls" : "stop")

/**
 * What a `chat` span learns from the answer: finish reason, the provider's response id and the model
 * that answered (when it says), token usage, and our `model.*` summary.
 */
export const chatResponseAttributes = (response: LlmResponse): Record<string, unknown> => {
  const usage = response.usage
  return {
    [GenAi.finishReasons]: [genAiFinishReason(finishReasonOf(response))],
    ...(response.responseId === undefined ? {} : { [GenAi.responseId]: response.responseId }),
    ...(response.responseModel === undefined ? {} : { [GenAi.responseModel]: response.responseModel }),
    ...(usage === undefined ? {} : {
      [GenAi.inputTokens]: usage.inputTokens,
      [GenAi.outputTokens]: usage.outputTokens,
      ...(usage.cachedInputTokens === undefined ? {} : { [GenAi.cacheReadTokens]: usage.cachedInputTokens }),
      ...(usage.reasoningTokens === undefined ? {} : { [GenAi.reasoningTokens]: usage.reasoningTokens })
    }),
    "model.response": response._tag,
    "model.tool_calls": response._tag === "ToolCalls" ? response.calls.length : 0
  }
}

/** The `execute_tool` span of a call: the tool runs in-process, so INTERNAL. */
export const toolSpan = (call: ToolCall, description: string | undefined, agent: string, skill: string, turn: number) => ({
  name: `execute_tool ${call.name}`,
  options: {
    kind: "internal" as const,
    attributes: {
      [GenAi.operation]: "execute_tool",
      [GenAi.toolName]: call.name,
      [GenAi.toolCallId]: call.id,
      [GenAi.toolType]: "function",
      ...(description === undefined ? {} : { [GenAi.toolDescription]: description }),
      "agent.name": agent,
      "agent.skill": skill,
      "agent.turn": turn
    },
    captureStackTrace: false
  }
})

/**
 * Our finish reasons in the conventions' words (`stop`, `length`, `content_filter`, `tool_call`, as
 * in the output message schema); `refusal` and `other` pass through as they are.
 */
export const genAiFinishReason = (reason: FinishReason): string => {
  switch (reason) {
    case "tool-calls":
      return "tool_call"
    case "content-filter":
      return "content_filter"
    default:
      return reason
  }
}

/** `effect` with `error.type` set on the current span (the one it runs in) when it fails. */
export const withErrorType = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tapCause(effect, (cause) => {
    const type = errorTypeOf(cause)
    return type === undefined ? Effect.void : Effect.annotateCurrentSpan(GenAi.errorType, type)
  })
