/**
 * `effect-agent-dsl/a2a`: agents over the Agent2Agent protocol (A2A 1.0, and 0.3 clients through the
 * official SDK's compatibility layer). `serveA2a(agent)` serves an agent as an A2A agent;
 * `a2aAgent(url)` makes a remote A2A agent a tool of ours. Needs the optional peer `@a2a-js/sdk`
 * (and `express` for the server).
 *
 * @module effect-agent-dsl/a2a
 */
export { agentCardOf } from "./agent-card.ts"
export type { AgentCardOptions, CardSource } from "./agent-card.ts"
export { a2aAgent, a2aTool } from "./client.ts"
export { a2aRemoteAgent, replyToolName } from "./remote-agent.ts"
export type { A2aRemoteAgentOptions } from "./remote-agent.ts"
export type { A2aAgentOptions, A2aUpdate } from "./client.ts"
export { A2aError } from "./errors.ts"
export type { A2aErrorKind } from "./errors.ts"
export { decisionsFromParts, inputFromParts, outputParts, pendingParts } from "./parts.ts"
export { jsonRpcPath, serveA2a } from "./serve.ts"
export { A2aTaskStoreFailed, sqlTaskStore } from "./sql-task-store.ts"
export type { SqlTaskStoreOptions } from "./sql-task-store.ts"
export type { A2aServable, A2aServableAgent, A2aServer, ServeA2aOptions } from "./serve.ts"
export { agentDriver, agentExecutor, outcomeOfExit, runnableDriver, taskExecutor } from "./task-executor.ts"
export type { EventSink, TaskDriver, TaskExecutor, TaskExecutorOptions, WaitingInContext } from "./task-executor.ts"
export { isSettledState, outcomeTaskState, remoteStateOf, taskStateOf } from "./task-state.ts"
export type { RemoteState, RunOutcomeTag } from "./task-state.ts"
