/**
 * effect-agent-dsl/ag-ui: agents behind AG-UI front ends (CopilotKit, `@ag-ui/client`'s `HttpAgent`).
 * Out: a run's events as AG-UI 1.0 events (`toAgUiEvents`, `agUiFrames`, or `eventStreamResponse(…,
 * { format: "ag-ui" })`). In: a `RunAgentInput` as a run's input (`fromRunAgentInput`), the client's
 * tools as tools that end the turn for the client (`clientTools`), interrupts answered by `resume`
 * entries (`resumeDecisions`), and all of it as one handler (`agUiHandler`). No AG-UI package is
 * needed at run time. See the README, "AG-UI".
 */
import { provideStreamingModules } from "../../web/edge-modules.ts"

provideStreamingModules()

export { agUiHandler, resumeDecisions } from "./ag-ui-handler.ts"
export type { AgUiHandlerOptions } from "./ag-ui-handler.ts"
export { clientTools } from "./client-tools.ts"
export { AgUiInputInvalid } from "./errors.ts"
export { fromRunAgentInput } from "./run-agent-input.ts"
export type { AgUiRunInput, ClientToolSpec, ResumeEntry, RunAgentInputLimits } from "./run-agent-input.ts"
export type { AgUiEvent, AgUiEventType, AgUiInterrupt, AgUiMessage, AgUiRunOutcome } from "./wire/ag-ui-event.ts"
export { agUiFrames, approvalAnswerSchema, interruptId, toAgUiEvents, toAgUiMessages } from "./wire/to-ag-ui.ts"
export type { AgUiStreamOptions } from "./wire/to-ag-ui.ts"
export { eventStreamResponse } from "../../runtime/event-stream-response.ts"
export type { ChatSuspension } from "../../web/chat-stream.ts"
export { nodeHandler } from "../../node/node-handler.ts"
