/**
 * The studio's HTTP API as the browser modules name it: type-only aliases of the server's own
 * definitions (`src/studio/server/api.ts`), so the front end and the server cannot drift. The browser
 * modules (plain JavaScript with JSDoc, checked by `tsc -p src/studio/ui`) import these with
 * `import("../api-types.ts")`.
 *
 * @example
 * ```ts
 * import type { RunSummary } from "./api-types.ts"
 * const failed = (runs: ReadonlyArray<RunSummary>) => runs.filter((run) => run.status === "failed")
 * ```
 */
export type {
  AgentInfo,
  ApprovalItem as PendingApproval,
  DecisionInput as Decision,
  DecisionRecord,
  ListChange,
  ModelRequestInfo as ModelExchange,
  PendingCallInfo as PendingCall,
  RunDetail,
  RunSource,
  RunStatus,
  RunSummary,
  SessionDetail,
  SessionSummary,
  StoredEvent,
  ToolInfo
} from "../server/api.ts"
