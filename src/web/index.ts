/**
 * effect-agent-dsl/web: agents behind `useChat` and any Web-standard server (Next.js route handlers,
 * Hono, Express through `nodeHandler`, edge functions). Nothing this entry imports loads a `node:`
 * module, and it hands the Effect modules a streaming run needs to their loaders up front, so a run
 * streams on runtimes without `require` (see the streaming guide, docs/guide/streaming.md, "Web frameworks").
 *
 * @module effect-agent-dsl/web
 */
import { provideStreamingModules } from "./edge-modules.ts"

provideStreamingModules()

export { chatHandler } from "./chat-handler.ts"
export type { ChatHandlerOptions } from "./chat-handler.ts"
export { chatResumeStream, chatStream } from "./chat-stream.ts"
export type { ChatStreamOptions, ChatSuspension } from "./chat-stream.ts"
export { UIMessagesInvalid } from "./errors.ts"
export { approvalDecisions, decodeUIMessages, fromUIMessages, toDecisions } from "./from-ui-messages.ts"
export type { ApprovalResponse, ChatInput, FromUIMessagesOptions, UIFile } from "./from-ui-messages.ts"
export type { UIMessageLimits, UnknownParts } from "./ui-message-schema.ts"
export { approvalId, eventStreamResponse } from "../runtime/event-stream-response.ts"
export { childRunKey } from "../runtime/child-run-mark.ts"
export type { ChildRunMark } from "../runtime/child-run-mark.ts"
export type { EventStreamOptions } from "../runtime/event-stream-response.ts"
export { nodeHandler, toWebRequest } from "../node/node-handler.ts"
export type { NodeRequest } from "../node/node-handler.ts"
export { sendResponse } from "../node/send-response.ts"
