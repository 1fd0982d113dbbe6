/**
 * Record and replay real model traffic (as VCR or Polly do for HTTP): `recordCassette(client, ...)`
 * wraps any `ModelClient` and writes each request and its answer (the whole response, or the streamed
 * parts with their timing, usage, errors) to a cassette file; `replayCassette(cassette)` answers the
 * same requests from it with no provider and no network, failing with the list of changes when a
 * request no longer matches. The names say "cassette" because `recordingModel` (requests kept in
 * memory for assertions) already exists and means something else: a cassette outlives the process.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { ModelError } from "../model/model-error.ts"
import type { LlmResponse, ModelRequest } from "../model/messages.ts"
import { ModelClient, type ModelMetadata } from "../model/model-client.ts"
import { PartsAssembler, partsOf, type ResponsePart } from "../model/response-part.ts"
import {
  type Cassette,
  CASSETTE_VERSION,
  CassetteError,
  type CassetteSource,
  type CassetteStore,
  type Interaction,
  parseCassette,
  type RecordedModelError,
  stableJson,
  storeOf,
  type TimedPart
} from "./cassette-format.ts"
import { CassetteMismatch, closestRecorded, describeChanges, type MatchRule, matchKey } from "./cassette-match.ts"
import { newSalt, redactorOf } from "./cassette-redact.ts"
import { AgentConfigError } from "../errors.ts"
import { shownValue } from "../internal/shown-value.ts"

/** Options of `recordCassette`. */
export interface RecordCassetteOptions {
  /** Where to write: a file path (its folder is created) or a store such as `memoryCassette()`. */
  readonly cassette: CassetteSource
  /**
   * Strings never to write (API keys, tokens): replaced by `[redacted:<tag>]` wherever they appear,
   * streamed answers included (a secret torn across deltas too). Always redacted besides: values of
   * environment variables named like `*_API_KEY`, `*_TOKEN`, `*_SECRET`, API keys shaped like
   * `sk-proj-…`, `Bearer` tokens and JWTs, GitHub tokens, an `Authorization:` header's credential, and
   * the `user:password@` of a URL. The tag is a salted slow hash of what was replaced, so two requests
   * differing only in a secret never match each other on replay.
   */
  readonly secrets?: ReadonlyArray<string>
}

/** A client whose calls are being written to a cassette. */
export interface CassetteRecorder extends ModelClient {
  /** Always present: a client without `stream` is streamed through `ModelClient.streamOf` and recorded so. */
  readonly stream: (request: ModelRequest) => Stream.Stream<ResponsePart, ModelError>
  /** The cassette as recorded so far. */
  readonly cassette: () => Cassette
}

const storedError = (error: ModelError): RecordedModelError => ({
  provider: error.provider,
  reason: error.reason,
  ...(error.status === undefined ? {} : { status: error.status }),
  ...(error.retryable === undefined ? {} : { retryable: error.retryable }),
  ...(error.kind === undefined ? {} : { kind: error.kind }),
  ...(error.partial === undefined ? {} : { partial: error.partial }),
  ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  ...(error.usage === undefined ? {} : { usage: error.usage })
})

const isModelError = (u: unknown): u is ModelError => u instanceof ModelError

/**
 * The two wrappers around a client that feed `save` one interaction per finished call: a chat answer
 * or failure, a stream's parts with their times and how it ended. Interrupted calls and defects are
 * not recorded (there is no answer to replay).
 */
const recorderOf = (client: ModelClient, save: (interaction: Interaction) => void) => {
  const chat = (request: ModelRequest): Effect.Effect<LlmResponse, ModelError> =>
    Effect.flatMap(Clock.currentTimeMillis, (start) =>
      client.chat(request).pipe(
        Effect.onExit((exit) =>
          Effect.map(Clock.currentTimeMillis, (end) => {
            const durationMs = end - start
            if (Exit.isSuccess(exit)) save({ call: "chat", request, outcome: { _tag: "Response", response: exit.value, durationMs } })
            else {
              const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
              if (failure?._tag === "Fail" && isModelError(failure.error)) {
                save({ call: "chat", request, outcome: { _tag: "Error", error: storedError(failure.error), durationMs } })
              }
            }
          })
        )
      ))
  const stream = (request: ModelRequest): Stream.Stream<ResponsePart, ModelError> =>
    Stream.unwrap(
      Effect.map(Clock.currentTimeMillis, (start) => {
        const parts: Array<TimedPart> = []
        return ModelClient.streamOf(client, request).pipe(
          Stream.tap((part) => Effect.map(Clock.currentTimeMillis, (now) => void parts.push({ atMs: now - start, part }))),
          Stream.onExit((exit) =>
            Effect.map(Clock.currentTimeMillis, (end) => {
              const durationMs = end - start
              if (Exit.isSuccess(exit)) return save({ call: "stream", request, outcome: { _tag: "Parts", parts, durationMs } })
              const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
              if (failure?._tag === "Fail" && isModelError(failure.error)) {
                save({ call: "stream", request, outcome: { _tag: "Parts", parts, error: storedError(failure.error), durationMs } })
              }
            })
          )
        )
      })
    )
  return { chat, stream }
}

/**
 * Wraps `client` (any provider) so that every call is written to `cassette`, which is started afresh
 * and rewritten (stable JSON) after each call. Keys and headers are never written: only the request
 * the client received and its answer are, errors without their `cause`, secrets redacted.
 * A cassette that cannot be written (a folder in the way, no permission) stops the call with a
 * defect carrying a `CassetteError`: a recording is never lost silently.
 *
 * @example
 * ```ts
 * const model = recordCassette(openai("gpt-4o-mini"), { cassette: "test/cassettes/calculator.json" })
 * await calculator.model(model).run("What is (3 + 5) * 2?")
 * // in CI, no network: calculator.model(replayCassette("test/cassettes/calculator.json"))
 * ```
 */
export const recordCassette = (client: ModelClient, options: RecordCassetteOptions): CassetteRecorder => {
  const store = storeOf(options.cassette)
  const redactionSalt = newSalt()
  const redact = redactorOf(options.secrets ?? [], redactionSalt)
  const interactions: Array<Interaction> = []
  const snapshot = (): Cassette => ({
    version: CASSETTE_VERSION,
    ...(client.metadata === undefined ? {} : { metadata: client.metadata }),
    redactionSalt,
    interactions: [...interactions]
  })
  const { chat, stream } = recorderOf(client, (interaction) => {
    interactions.push(redact.interaction(interaction))
    store.write(stableJson(snapshot()))
  })
  return { chat, stream, cassette: snapshot, ...(client.metadata === undefined ? {} : { metadata: client.metadata }) }
}

/** How fast a replayed answer arrives. */
export type ReplayPace = "instant" | "recorded" | { readonly speedup: number }

/** Options of `replayCassette`. */
export interface ReplayCassetteOptions {
  /** How requests are matched to recorded ones (see `MatchRule`). Default `"exact"`. */
  readonly match?: MatchRule
  /**
   * `"instant"` (default): answers at once; `"recorded"`: each streamed part (and a whole answer) at
   * the time it arrived when recorded; `{ speedup: 10 }`: ten times as fast as recorded.
   */
  readonly pace?: ReplayPace
  /**
   * Record what is missing: a request without a recorded answer goes to this client and its answer is
   * added to the cassette (a missing cassette file is then started). Without it, such a request fails.
   */
  readonly recordMissing?: ModelClient
  /**
   * The strings redacted when recording (see `RecordCassetteOptions.secrets`): a live request is
   * redacted the same way before it is matched, so a prompt holding a token-shaped string still
   * matches its recording; with `recordMissing`, never written either.
   */
  readonly secrets?: ReadonlyArray<string>
}

/** A client answering from a cassette. */
export interface CassetteReplayer extends ModelClient {
  /** Always present, whatever the recorded calls were (see `replayCassette`). */
  readonly stream: (request: ModelRequest) => Stream.Stream<ResponsePart, ModelError>
  /** Recorded interactions no request has used yet (assert it is empty to know the test used them all). */
  readonly unused: () => ReadonlyArray<Interaction>
  /** Requests that matched nothing, in order. */
  readonly mismatches: ReadonlyArray<CassetteMismatch>
}

const modelErrorOf = (error: RecordedModelError): ModelError => new ModelError(error)

/**
 * A client answering from `cassette` (a path, a store, or a parsed `Cassette`): each request is
 * answered by the first recorded interaction not yet used whose request matches under `match`. One
 * that matches none fails with a `ModelError` (`provider: "cassette"`, not retryable) whose `cause`
 * is a `CassetteMismatch` listing what changed against the interaction expected next: system prompt,
 * tools offered, tool choice, settings, the first differing message. Throws `CassetteError` when the
 * cassette cannot be read (missing without `recordMissing`, not JSON, unknown version, malformed).
 * A call recorded as a stream replays to `chat` as its assembled response, and the other way round.
 *
 * @example
 * ```ts
 * const model = replayCassette("test/cassettes/calculator.json", { match: "ignore-volatile" })
 * expect(await calculator.model(model).run("What is (3 + 5) * 2?")).toBe("16")
 * expect(model.unused()).toEqual([])
 * ```
 */
export const replayCassette = (cassette: CassetteSource | Cassette, options: ReplayCassetteOptions = {}): CassetteReplayer => {
  const rule = options.match ?? "exact"
  const pace = options.pace ?? "instant"
  // A speedup of 0 or less waited for ever, NaN not at all: refused, as evaluate refuses a bad concurrency.
  if (pace !== "instant" && pace !== "recorded") {
    const speedup: unknown = typeof pace === "object" && pace !== null ? (pace as { speedup?: unknown }).speedup : undefined
    if (typeof speedup !== "number" || !Number.isFinite(speedup) || speedup <= 0) {
      throw new AgentConfigError({ subject: "replayCassette(...)", reason: `pace must be "instant", "recorded" or { speedup: n } with n a finite number > 0, got ${typeof pace === "object" && pace !== null ? `{ speedup: ${shownValue(speedup)} }` : shownValue(pace)}` })
    }
  }
  const isCassette = (c: CassetteSource | Cassette): c is Cassette => typeof c === "object" && "interactions" in c
  const store: CassetteStore | undefined = isCassette(cassette) ? undefined : storeOf(cassette)
  const name = store?.name ?? "(in memory)"
  let loaded: Cassette
  if (isCassette(cassette)) loaded = parseCassette(JSON.stringify(cassette), name)
  else {
    const text = store!.read()
    if (text === undefined && options.recordMissing === undefined) {
      throw new CassetteError({ source: name, reason: "no such cassette (record it first, or pass recordMissing to start it)" })
    }
    loaded = text === undefined ? { version: CASSETTE_VERSION, interactions: [] } : parseCassette(text, name)
  }
  // A cassette recorded before tags keeps its bare markers; an empty or new one gets a salt.
  const redactionSalt = loaded.redactionSalt ?? (loaded.interactions.length === 0 ? newSalt() : undefined)
  const interactions: Array<Interaction> = [...loaded.interactions]
  const used: Array<boolean> = interactions.map(() => false)
  const keys: Array<string | undefined> = []
  const keyOf = (i: number) => (keys[i] ??= matchKey(rule, interactions[i]!.request))
  const mismatches: Array<CassetteMismatch> = []
  const redact = redactorOf(options.secrets ?? [], redactionSalt)
  let calls = 0

  const wait = (ms: number): Effect.Effect<void> => {
    if (pace === "instant" || ms <= 0) return Effect.void
    const scaled = pace === "recorded" ? ms : ms / pace.speedup
    return Effect.sleep(Duration.millis(scaled))
  }

  /** The index of the interaction answering `request`, or the mismatch. */
  const find = (live: ModelRequest): Result.Result<number, CassetteMismatch> => {
    calls += 1
    // Recorded requests were redacted: compare like with like.
    const request = redact.value(live)
    const key = matchKey(rule, request)
    for (let i = 0; i < interactions.length; i++) {
      if (!used[i] && keyOf(i) === key) {
        used[i] = true
        return Result.succeed(i)
      }
    }
    const expected = closestRecorded(rule, interactions.filter((_, i) => !used[i]).map((i) => i.request), request)
    const changes = expected === undefined
      ? [`the cassette has no interaction left (it has ${interactions.length}, all used)`]
      : describeChanges(rule, expected, request)
    return Result.fail(new CassetteMismatch({ cassette: name, call: calls, changes }))
  }

  const recorder = options.recordMissing === undefined
    ? undefined
    : (() => {
      return recorderOf(options.recordMissing, (interaction) => {
        interactions.push(redact.interaction(interaction))
        used.push(true)
        store?.write(stableJson({ ...loaded, ...(redactionSalt === undefined ? {} : { redactionSalt }), interactions }))
      })
    })()

  const mismatchError = (mismatch: CassetteMismatch) => {
    mismatches.push(mismatch)
    return new ModelError({ provider: "cassette", reason: mismatch.message, retryable: false, cause: mismatch })
  }

  const chat = (request: ModelRequest): Effect.Effect<LlmResponse, ModelError> =>
    Effect.suspend(() => {
      const found = find(request)
      if (Result.isFailure(found)) return recorder !== undefined ? recorder.chat(request) : Effect.fail(mismatchError(found.failure))
      const { outcome } = interactions[found.success]!
      const answer: Effect.Effect<LlmResponse, ModelError> = outcome._tag === "Response"
        ? Effect.succeed(outcome.response)
        : outcome._tag === "Error"
        ? Effect.fail(modelErrorOf(outcome.error))
        : (() => {
          if (outcome.error !== undefined) return Effect.fail(modelErrorOf(outcome.error))
          const assembler = new PartsAssembler(found.success + 1)
          outcome.parts.forEach(({ part }) => assembler.add(part))
          const response = assembler.response()
          return Result.isSuccess(response)
            ? Effect.succeed(response.success)
            : Effect.fail(new ModelError({ provider: "cassette", reason: `recorded parts do not make a response: ${response.failure}`, retryable: false }))
        })()
      return Effect.andThen(wait(outcome.durationMs), answer)
    })

  const stream = (request: ModelRequest): Stream.Stream<ResponsePart, ModelError> =>
    Stream.suspend(() => {
      const found = find(request)
      if (Result.isFailure(found)) return recorder !== undefined ? recorder.stream(request) : Stream.fail(mismatchError(found.failure))
      const { outcome } = interactions[found.success]!
      if (outcome._tag === "Error") return Stream.fromEffect(Effect.andThen(wait(outcome.durationMs), Effect.fail(modelErrorOf(outcome.error))))
      if (outcome._tag === "Response") {
        return Stream.concat(Stream.fromEffect(wait(outcome.durationMs)).pipe(Stream.drain), Stream.fromIterable(partsOf(outcome.response)))
      }
      let previous = 0
      const parts = Stream.fromIterable(outcome.parts).pipe(
        Stream.mapEffect(({ atMs, part }) => {
          const gap = atMs - previous
          previous = atMs
          return Effect.as(wait(gap), part)
        })
      )
      const { error } = outcome
      return error === undefined ? parts : Stream.concat(parts, Stream.fail(modelErrorOf(error)))
    })

  const metadata: ModelMetadata | undefined = loaded.metadata ?? options.recordMissing?.metadata
  return {
    chat,
    stream,
    unused: () => interactions.filter((_, i) => !used[i]),
    mismatches,
    ...(metadata === undefined ? {} : { metadata })
  }
}
