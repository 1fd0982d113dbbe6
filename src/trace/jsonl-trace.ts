/**
 * A hook that writes every event of every run as one JSON line (format: `trace-line.ts`).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { AgentEvent, Listener } from "../dsl/events.ts"
import { lazyPackage } from "../internal/lazy-package.ts"
import { stringifyTraceLine, traceLine } from "./trace-line.ts"

// node:fs loads when a trace is first written to a file, not with the package (edge runtimes have none).
const fs = lazyPackage<typeof import("node:fs")>("node:fs")

/** Where lines go: a file path (appended, synchronously, so lines keep their order) or any writer. */
export type TraceSink = string | { readonly write: (line: string) => unknown }

/**
 * A listener for `.onEvent(...)` that writes a JSON Lines trace.
 *
 * @example
 * ```ts
 * const traced = calculator.onEvent(jsonlTrace("trace.jsonl"))
 * await traced.run("What is (3 + 5) * 2?")
 * // then: npm run trace -- trace.jsonl
 * ```
 */
export const jsonlTrace = (sink: TraceSink): Listener<AgentEvent> => {
  const write = typeof sink === "string" ? (line: string) => fs().appendFileSync(sink, line) : sink.write
  return (event) =>
    Clock.currentTimeMillis.pipe(Effect.map((ts) => void write(`${stringifyTraceLine(traceLine(event, ts))}\n`)))
}
