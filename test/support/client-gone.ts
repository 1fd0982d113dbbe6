/**
 * For the tests of a client that goes away (web and AG-UI handlers): a model that streams until it is
 * stopped, recording its requests and its stop; reading a response's first chunks then aborting; and
 * the wait for the run to wind down.
 */
import { Effect, Schedule, Stream } from "effect"
import type { ModelClient } from "../../src/index.ts"

/** A model that streams a word every 20 ms until it is stopped; `calls` its requests, `closed` its stops. */
export const endlessModel = () => {
  const closed: Array<string> = []
  const calls: Array<unknown> = []
  const model: ModelClient = {
    chat: () => Effect.die("streaming only"),
    stream: (request) => {
      calls.push(request)
      return Stream.fromSchedule(Schedule.spaced("20 millis")).pipe(
        Stream.map((n) => ({ _tag: "TextDelta" as const, delta: `word${n} ` })),
        Stream.ensuring(Effect.sync(() => void closed.push("model request closed")))
      )
    }
  }
  return { model, closed, calls }
}

/** Time for an interrupted run to close its model request. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 200))

/** Reads the first two chunks of `response` (the run is streaming), then aborts `abort`. */
export const abortMidStream = async (response: Response, abort: AbortController): Promise<void> => {
  const reader = response.body!.getReader()
  await reader.read()
  await reader.read()
  abort.abort()
}
