/**
 * `npm run bench`: the calculator agent (two tools, three tool-call turns, then a final answer, over an
 * instant mock model) on this library and its peers, measured side by side in one run, plus
 * micro-benchmarks of our own hot spots. Prints figures; asserts nothing about speed.
 *
 * Environment: BENCH_ROUNDS (default 7), BENCH_ROUND_MS (default 1000), BENCH_CONCURRENT (default 10000).
 */
import { execFileSync } from "node:child_process"
import { cpus } from "node:os"
import { stepsPerRun } from "./calculator/script.ts"
import { libraries } from "./libraries.ts"
import { runMicro } from "./micro.ts"

const rounds = Number(process.env.BENCH_ROUNDS ?? 7)
const roundMs = Number(process.env.BENCH_ROUND_MS ?? 1000)
const concurrent = Number(process.env.BENCH_CONCURRENT ?? 10_000)

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

console.log(`machine: ${cpus()[0]?.model ?? "unknown CPU"} x${cpus().length}, Node ${process.version}, ${process.platform}`)
console.log(`scenario: ${stepsPerRun} model calls and ${stepsPerRun - 1} tool runs per agent run; instant mock models\n`)

// Throughput: sequential runs for roundMs, libraries interleaved round by round; the first round warms up.
const runners = libraries.map((library) => {
  const counters = { modelCalls: 0, toolRuns: 0 }
  return { library, counters, runOnce: library.makeRunner({ concurrentMode: false, counters }), rates: [] as Array<number> }
})
for (const runner of runners) {
  const output = await runner.runOnce()
  const { modelCalls, toolRuns } = runner.counters
  if (output !== "17" || modelCalls !== stepsPerRun || toolRuns !== stepsPerRun - 1) {
    throw new Error(`${runner.library.name} did not run the scenario: ${output}, ${modelCalls} model calls, ${toolRuns} tool runs`)
  }
}
for (let round = 0; round <= rounds; round++) {
  for (const runner of runners) {
    let runs = 0
    const started = performance.now()
    while (performance.now() - started < roundMs) {
      await runner.runOnce()
      runs++
    }
    if (round > 0) runner.rates.push((runs * 1000) / (performance.now() - started))
  }
}

// Memory: each library in a fresh process, `concurrent` runs in flight together.
const memory = libraries.map((_, index) => {
  const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", "bench/memory-child.ts", String(index), String(concurrent)], {
    encoding: "utf8"
  })
  return JSON.parse(out.trim().split("\n").at(-1)!) as { peakHeapMB: number; peakRssMB: number; durationMs: number; ok: boolean }
})

const ours = median(runners[0]!.rates)
const table = runners.map((runner, index) => {
  const rate = median(runner.rates)
  const mem = memory[index]!
  return {
    library: runner.library.name,
    "runs/s": Math.round(rate),
    "µs/step": +(1e6 / (rate * stepsPerRun)).toFixed(1),
    "ours ÷ this (speed)": +(ours / rate).toFixed(2),
    [`peak heap MB, ${concurrent} concurrent`]: +mem.peakHeapMB.toFixed(1),
    "peak RSS MB": +mem.peakRssMB.toFixed(1),
    "all ran": mem.ok
  }
})
console.log(`Calculator agent: median of ${rounds} rounds of ${roundMs} ms after a warm-up round`)
console.table(table)

const micro = runMicro()
console.log("Our hot spots (medians)")
console.table([
  { what: "tool JSON Schema + decoder for a 50-field Schema", value: `${(micro.generationMs * 1000).toFixed(0)} µs` },
  { what: "decode 50-field arguments (JSON string)", value: `${micro.wideDecodeUs.toFixed(1)} µs` },
  { what: "decode calculator arguments (JSON string)", value: `${micro.calcDecodeUs.toFixed(2)} µs` },
  { what: "pickTools over 1,000 tools", value: `${micro.pickMs.toFixed(2)} ms` }
])
console.log(`pickTools picked: ${micro.picked.join(", ")}`)

const { runStreaming } = await import("./streaming.ts")
console.log("\nStreaming: the same mock stream of 200 text deltas (medians of 200 runs, interleaved)")
console.table(await runStreaming())
