/**
 * The studio's pure browser modules, typed for these tests. They are JavaScript with JSDoc types,
 * served as they are and checked by `tsc -p src/studio/ui` (with `allowJs`); the repository's own
 * `tsc` does not read JavaScript, so the shapes the tests use are restated here.
 */
// @ts-ignore JavaScript module without a declaration file (checked by tsc -p src/studio/ui)
import * as runViewModule from "../../../src/studio/ui/public/run-view.js"
// @ts-ignore JavaScript module without a declaration file (checked by tsc -p src/studio/ui)
import * as sseModule from "../../../src/studio/ui/public/sse.js"
// @ts-ignore JavaScript module without a declaration file (checked by tsc -p src/studio/ui)
import * as schemaValidateModule from "../../../src/studio/ui/public/schema-validate.js"

export interface ToolCallView {
  readonly key: string
  readonly id: string | undefined
  readonly tool: string
  readonly status: string
  readonly argsText: string
  readonly args: unknown
  readonly result: unknown
  readonly decision: { readonly decision: string; readonly reason?: string; readonly at: unknown } | undefined
}
export interface TurnView {
  readonly turn: number
  readonly text: string
  readonly reasoning: string
  readonly durationMs: number | undefined
  readonly calls: ReadonlyArray<ToolCallView>
}
export interface RunView {
  readonly eventCount: number
  readonly skill: string | undefined
  readonly skillHow: string | undefined
  readonly turns: ReadonlyArray<TurnView>
  readonly ended: boolean
  readonly outcome: string | undefined
  readonly output: unknown
}

export const { applyEvent, emptyRunView, isRunEnd, tokensOf } = runViewModule as {
  readonly applyEvent: (view: RunView, event: unknown, at?: unknown) => RunView
  readonly emptyRunView: () => RunView
  readonly isRunEnd: (event: unknown, runId: string) => boolean
  readonly tokensOf: (usage: unknown) => { input: number | undefined; output: number | undefined; total: number | undefined }
}
export const { validate } = schemaValidateModule as {
  readonly validate: (schema: unknown, value: unknown) => Array<{ path: string; message: string }>
}

export interface SseMessage {
  readonly id: string | undefined
  readonly event: string
  readonly data: string
}
export const { readEventStream } = sseModule as {
  readonly readEventStream: (body: ReadableStream<Uint8Array>, onMessage: (message: SseMessage) => void, signal: AbortSignal) => Promise<void>
}
