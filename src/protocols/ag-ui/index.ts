/**
 * effect-agent-dsl/ag-ui: agents behind AG-UI front ends (CopilotKit, `@ag-ui/client`'s `HttpAgent`).
 * Out: a run's events as AG-UI 1.0 events (`toAgUiEvents`, `agUiFrames`, or `eventStreamResponse(…,
 * { format: "ag-ui" })`). In: a `RunAgentInput` as a run's input (`fromRunAgentInput`), the client's
 * tools as tools that end the turn for the client (`clientTools`), interrupts answered by `resume`
 * entries (`resumeDecisions`), shared state typed by a Schema (`agUiState`: `STATE_SNAPSHOT` and
 * `STATE_DELTA` as tools change it), and all of it as one handler (`agUiHandler`). No AG-UI package is
 * needed at run time. See the streaming guide, docs/guide/streaming.md, "AG-UI".
 *
 * @module effect-agent-dsl/ag-ui
 */
import { provideStreamingModules } from "../../web/edge-modules.ts"

provideStreamingModules()

export { agUiHandler, resumeDecisions } from "./ag-ui-handler.ts"
export type { AgUiHandlerOptions } from "./ag-ui-handler.ts"
export { clientTools } from "./client-tools.ts"
export { AgUiInputInvalid, AgUiStateInvalid, AgUiStateUnavailable } from "./errors.ts"
export { agUiState, statePatch } from "./shared-state.ts"
export type { AgUiState, AgUiStateCell, AgUiStateOptions } from "./shared-state.ts"
export { fromRunAgentInput } from "./run-agent-input.ts"
export type { AgUiRunInput, ClientToolSpec, ResumeEntry, RunAgentInputLimits } from "./run-agent-input.ts"
export type { AgUiEvent, AgUiEventType, AgUiInputMessage, AgUiInterrupt, AgUiMessage, AgUiRunOutcome, JsonPatchOperation } from "./wire/ag-ui-event.ts"
export { agUiFrames, approvalAnswerSchema, interruptId, toAgUiEvents, toAgUiMessages } from "./wire/to-ag-ui.ts"
export type { AgUiStateSource, AgUiStreamOptions } from "./wire/to-ag-ui.ts"
export { eventStreamResponse } from "../../runtime/event-stream-response.ts"
export { chatStream } from "../../web/chat-stream.ts"
export type { ChatSuspension } from "../../web/chat-stream.ts"
export { nodeHandler } from "../../node/node-handler.ts"
