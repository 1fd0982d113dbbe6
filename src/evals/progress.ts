/**
 * Progress of an evaluation in the terminal: one line rewritten in place on a TTY (`[7/20] 6 passed,
 * 1 failed ... case-7`), one line per case otherwise (CI logs), to stderr so stdout keeps the table.
 * With repetitions the line counts runs and names the run (`[7/80] ... case-2 #3`).
 */
import type { EvalProgress } from "./evaluate.ts"

/** Where progress goes: anything with `write` (a stream); `isTTY` selects the in-place line. */
export interface ProgressSink {
  write(text: string): unknown
  readonly isTTY?: boolean
}

const stderr = (): ProgressSink | undefined => (globalThis as { process?: { stderr?: ProgressSink } }).process?.stderr

/**
 * An `onProgress` for `evaluate` writing to `sink` (default: `process.stderr`).
 *
 * @example
 * ```ts
 * yield* evaluate(agent, cases, scorers, { onProgress: terminalProgress() })
 * ```
 */
export const terminalProgress = (sink: ProgressSink | undefined = stderr()): ((progress: EvalProgress) => void) => {
  const counts = { passed: 0, failed: 0, errored: 0, skipped: 0 }
  return ({ done, total, result, repetition }) => {
    if (sink === undefined) return
    counts[result.status] += 1
    const line = `[${done}/${total}] ${counts.passed} passed, ${counts.failed} failed, ${counts.errored} errored, ${counts.skipped} skipped  ${result.id}${repetition === undefined ? "" : ` #${repetition}`}`
    if (sink.isTTY === true) sink.write(`\r\x1b[2K${line}${done === total ? "\n" : ""}`)
    else sink.write(`${line}\n`)
  }
}
