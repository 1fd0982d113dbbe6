/**
 * JSON Lines traces (`jsonlTrace(path)`, format of `trace/trace-line.ts`) read into the studio's store:
 * each line becomes the run event it records, as far as the line keeps it (a trace keeps a model call's
 * message count and tool names, not its messages). Lines that are not trace lines are skipped and
 * counted, as `effect-agent-trace` does. Importing a run again replaces it.
 */
import { readFileSync } from "node:fs"
import type { TraceLine } from "../../trace/trace-line.ts"
import type { EventJson } from "../store/event-json.ts"
import type { RunStore } from "../store/run-store.ts"

const isTraceLine = (value: unknown): value is TraceLine => {
  const line = value as Partial<TraceLine> | null
  return typeof line === "object" && line !== null && line.v === 1 && typeof line.ts === "number" && typeof line.run === "string" &&
    typeof line.agent === "string" && typeof line.event === "string"
}

/**
 * The run event a trace line records.
 *
 * @example
 * ```ts
 * eventOfTraceLine({ v: 1, ts: 1, run: "run_1", agent: "calc", event: "ToolUse", callId: "c1", tool: "add" })
 * // { _tag: "ToolUse", runId: "run_1", agent: "calc", toolCallId: "c1", tool: "add" }
 * ```
 */
export const eventOfTraceLine = (line: TraceLine): EventJson => {
  const { v: _v, ts: _ts, run, agent, event, parentRun, callId, ...fields } = line as TraceLine & Record<string, unknown>
  // The line's other fields first: none of them may replace the event's tag, run or agent.
  const base: Record<string, unknown> = {
    ...fields,
    _tag: event,
    runId: run,
    agent,
    ...(typeof parentRun === "string" ? { parentRunId: parentRun } : {}),
    ...(callId === undefined ? {} : { toolCallId: callId })
  }
  if (event === "RunEnd") {
    const { outcome, output, error, pending, ...rest } = base
    return {
      ...rest,
      _tag: "RunEnd",
      outcome: {
        _tag: outcome,
        ...(output === undefined ? {} : { output }),
        ...(error === undefined ? {} : { error }),
        ...(Array.isArray(pending) ? { pending: pending.map((id) => ({ id: String(id) })) } : {})
      }
    } as EventJson
  }
  if (event === "ModelResponse") {
    const { response, text, calls, usage, ...rest } = base
    return {
      ...rest,
      _tag: "ModelResponse",
      response: {
        _tag: response,
        ...(text === undefined ? {} : { content: text }),
        ...(Array.isArray(calls) ? { calls: calls.map((name) => ({ name })) } : {}),
        ...(usage === undefined ? {} : { usage })
      }
    } as EventJson
  }
  if (event === "ToolError" || event === "HookFailed") {
    const error = base.error as { tag?: string; message?: string } | undefined
    return { ...base, error: { ...(error?.tag === undefined ? {} : { _tag: error.tag }), message: error?.message } } as unknown as EventJson
  }
  return base as EventJson
}

/**
 * What an import did: the runs it stored, the lines it skipped, and the runs it left alone because the
 * store holds a run of that id from another source (a studio run, a durable one: a trace never
 * replaces them).
 *
 * @example
 * ```ts
 * const { runs, skipped, kept }: TraceImport = importTrace(store, "trace.jsonl")
 * ```
 */
export interface TraceImport {
  readonly runs: ReadonlyArray<string>
  readonly skipped: number
  readonly kept: ReadonlyArray<string>
}

/**
 * Reads a JSON Lines trace (a file path, or `{ text }`) into `store` as runs of source `trace`.
 *
 * @example
 * ```ts
 * importTrace(store, "trace.jsonl") // { runs: ["run_…"], skipped: 0 }
 * ```
 */
export const importTrace = (store: RunStore, source: string | { readonly text: string }): TraceImport => {
  let text: string
  try {
    text = typeof source === "string" ? readFileSync(source, "utf8") : source.text
  } catch (error) {
    process.emitWarning(`effect-agent-studio: cannot read the trace ${String(source)}: ${error instanceof Error ? error.message : String(error)}`)
    return { runs: [], skipped: 0, kept: [] }
  }
  const byRun = new Map<string, Array<{ at: number; event: EventJson }>>()
  let skipped = 0
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      skipped += 1
      continue
    }
    if (!isTraceLine(parsed)) {
      skipped += 1
      continue
    }
    const list = byRun.get(parsed.run) ?? []
    list.push({ at: parsed.ts, event: eventOfTraceLine(parsed) })
    byRun.set(parsed.run, list)
  }
  const runs: Array<string> = []
  const kept: Array<string> = []
  for (const [runId, events] of byRun) {
    const existing = store.get(runId)
    if (existing !== undefined && existing.source !== "trace") {
      kept.push(runId)
      continue
    }
    store.replace("trace", runId, events)
    runs.push(runId)
  }
  return { runs, skipped, kept }
}
