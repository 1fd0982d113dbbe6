/**
 * Runs N concurrent calculator runs of one library in a fresh process and prints, as JSON, the peak
 * heap and RSS above the baseline. Every model call waits a macrotask, so all runs are in flight
 * together (as with a real model), and the sampler gets to run between them.
 * Usage: node --expose-gc --import tsx bench/memory-child.ts <library index> <runs>
 */
import { stepsPerRun } from "./calculator/script.ts"
import { libraries } from "./libraries.ts"

const library = libraries[Number(process.argv[2])]!
const runs = Number(process.argv[3] ?? 10_000)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc")

const counters = { modelCalls: 0, toolRuns: 0 }
const runOnce = library.makeRunner({ concurrentMode: true, counters })
for (let i = 0; i < 20; i++) await runOnce()
counters.modelCalls = 0
counters.toolRuns = 0
gc()
gc()
const baseline = process.memoryUsage()
let peakHeap = 0
let peakRss = 0
const sample = () => {
  const now = process.memoryUsage()
  peakHeap = Math.max(peakHeap, now.heapUsed - baseline.heapUsed)
  peakRss = Math.max(peakRss, now.rss - baseline.rss)
}
const sampler = setInterval(sample, 1)
const started = performance.now()
const outputs = await Promise.all(Array.from({ length: runs }, () => runOnce()))
const durationMs = performance.now() - started
sample()
clearInterval(sampler)
const ok = outputs.every((o) => o === "17") && counters.modelCalls === runs * stepsPerRun && counters.toolRuns === runs * (stepsPerRun - 1)
console.log(JSON.stringify({ peakHeapMB: peakHeap / 2 ** 20, peakRssMB: peakRss / 2 ** 20, durationMs, ok }))
