/** Measuring helpers shared by the bench: summaries (median, min, max) and interleaved timed rounds. */

export interface Summary {
  readonly median: number
  readonly min: number
  readonly max: number
}

export const summarize = (xs: ReadonlyArray<number>): Summary => {
  if (xs.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN }
  const sorted = [...xs].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted.at(-1)! }
}

/** "12.3 (11.9–13.0)": the median with the range, `digits` decimals. */
export const show = (s: Summary, digits = 1): string =>
  `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`

const gc = (globalThis as { gc?: () => void }).gc

/** Collects garbage when the process runs with `--expose-gc`, so one subject's garbage is not collected on another's time. */
export const collect = () => {
  if (gc !== undefined) {
    gc()
    gc()
  }
}

/** Unmeasured runs after each collection (`BENCH_SETTLE_MS`, default 250 ms; see `interleavedRounds`). */
const settleMsDefault = Number(process.env.BENCH_SETTLE_MS ?? 250)

export interface Timed {
  /** Wall time per run, µs. */
  readonly wallUs: Summary
  /** CPU time (user + system, `process.cpuUsage`) per run, µs. */
  readonly cpuUs: Summary
  readonly runsPerRound: Summary
}

/**
 * Runs each subject sequentially for at least `roundMs` (and at least once) per round, subjects
 * interleaved round by round, the first round a discarded warm-up; garbage collected before every
 * subject's turn, then `settleMs` of unmeasured runs: a forced full collection shrinks V8's young
 * generation, and every library then runs 2–5× slower until the heap has grown back (measured: ours
 * 1,660 → 320 µs/run over its first ~1,000 runs, the AI SDK 3,350 → 1,100, the Effect floor 120 → 16),
 * which is the harness's doing, not the library's. Returns per-run wall and CPU time for each
 * subject, as median (min–max) over rounds.
 */
export const interleavedRounds = async (
  subjects: ReadonlyArray<() => Promise<unknown>>,
  options: { readonly rounds: number; readonly roundMs: number; readonly settleMs?: number }
): Promise<ReadonlyArray<Timed>> => {
  const settleMs = options.settleMs ?? settleMsDefault
  const samples = subjects.map(() => ({ wall: [] as Array<number>, cpu: [] as Array<number>, runs: [] as Array<number> }))
  for (let round = 0; round <= options.rounds; round++) {
    // Alternate the order so that no subject always runs right after the same neighbour.
    const order = subjects.map((_, i) => i)
    if (round % 2 === 1) order.reverse()
    for (const index of order) {
      const runOnce = subjects[index]!
      collect()
      const settling = performance.now()
      do await runOnce()
      while (performance.now() - settling < settleMs)
      let runs = 0
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      let elapsed = 0
      do {
        await runOnce()
        runs++
        elapsed = performance.now() - started
      } while (elapsed < options.roundMs)
      const cpu = process.cpuUsage(cpuBefore)
      if (round > 0) {
        samples[index]!.wall.push((elapsed * 1000) / runs)
        samples[index]!.cpu.push((cpu.user + cpu.system) / runs)
        samples[index]!.runs.push(runs)
      }
    }
  }
  return samples.map((s) => ({ wallUs: summarize(s.wall), cpuUs: summarize(s.cpu), runsPerRound: summarize(s.runs) }))
}

/**
 * A few turns of the event loop after a streamed run, so that work a library leaves behind once its
 * stream ended (the AI SDK's streamText: ~5 ms of wall time) runs before the next library's run rather
 * than inside it, where it doubled the next library's first delta. Awaited inside the run's measured
 * span, so a library's leftovers count in its own CPU time.
 *
 * @example
 * ```ts
 * const answer = await subject.consume(onDelta)
 * await settleEventLoop()
 * ```
 */
export const settleEventLoop = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve))
  await new Promise<void>((resolve) => setTimeout(resolve, 1))
}

/** When a streamed run's first delta came (ms after its start) and the wall time per delta after it (µs). */
export interface DeltaTiming {
  readonly firstMs: number
  readonly perDeltaUs: number
}

/**
 * The clock of one streamed run, started when made: `see` each delta as it arrives; `seen` and `text`
 * are what came (to check the run), `timing` when the first came and the time per delta after it.
 *
 * @example
 * ```ts
 * const clock = deltaClock()
 * const answer = await subject.consume(clock.see)
 * clock.text() === answer // the deltas, in order
 * clock.timing()          // { firstMs, perDeltaUs }
 * ```
 */
export const deltaClock = () => {
  const started = performance.now()
  let first = 0
  let last = 0
  let seen = 0
  let text = ""
  return {
    see: (delta: string): void => {
      const now = performance.now()
      if (seen === 0) first = now
      last = now
      seen++
      text += delta
    },
    seen: () => seen,
    text: () => text,
    timing: (): DeltaTiming => ({ firstMs: first - started, perDeltaUs: seen > 1 ? ((last - first) * 1000) / (seen - 1) : 0 })
  }
}
