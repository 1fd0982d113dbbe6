/**
 * A streaming model for tests of runs that write at once: its i-th call streams `answers[i]` (the last
 * one again after that), a part every `delayMs`, so that two runs' deltas interleave.
 */
import { Effect, Stream } from "effect"
import type { ModelClient } from "../../src/index.ts"
import type { ResponsePart } from "../../src/model/response-part.ts"

/** A model streaming `answers[i]` at its i-th call, a part every `delayMs`. */
export const pacedModel = (answers: ReadonlyArray<ReadonlyArray<ResponsePart>>, delayMs: number): ModelClient => {
  let call = 0
  return {
    chat: () => Effect.die("streamed only"),
    stream: () => Stream.fromIterable(answers[Math.min(call++, answers.length - 1)]!).pipe(Stream.tap(() => Effect.sleep(delayMs)))
  }
}

/** `text` as deltas of three characters, then the answer's end. */
export const textParts = (text: string): ReadonlyArray<ResponsePart> => [
  ...Array.from({ length: Math.ceil(text.length / 3) }, (_, i) => ({ _tag: "TextDelta" as const, delta: text.slice(3 * i, 3 * i + 3) })),
  { _tag: "Finish", reason: "stop" }
]
