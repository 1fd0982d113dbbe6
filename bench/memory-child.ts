/**
 * Live memory per in-flight run, for one library in a fresh process. Starts N runs of the calculator
 * together; the mock model parks every run in its third model call (after two tool results) behind one
 * barrier. When all N are parked: `gc()` twice, heapUsed minus the baseline (taken the same way before the
 * runs started), ÷ N. Then the barrier opens and every run must finish correctly.
 * Usage: node --expose-gc --import tsx/esm bench/memory-child.ts <library key> <runs>
 * Prints one JSON line: { bytesPerRun, ok }.
 */
import { calculator, checkRun } from "./calculator/script.ts"
import { libraryByKey } from "./libraries.ts"

const library = libraryByKey(process.argv[2] ?? "ours")
const runs = Number(process.argv[3] ?? 5000)
const parkAt = 2
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc")

let parked = 0
let allParked!: () => void
const parkedAll = new Promise<void>((resolve) => (allParked = resolve))
let open!: () => void
const barrier = new Promise<void>((resolve) => (open = resolve))
let parking = false
const counters = { modelCalls: 0, toolRuns: 0 }
const park = (toolResults: number) => {
  if (!parking || toolResults !== parkAt) return undefined
  if (++parked === runs) allParked()
  return barrier
}
const runOnce = library.makeRunner(calculator, { counters, park })
for (let i = 0; i < 50; i++) await runOnce()
counters.modelCalls = 0
counters.toolRuns = 0
const pending: Array<Promise<string>> = new Array(runs)
gc()
gc()
const baseline = process.memoryUsage().heapUsed
parking = true
for (let i = 0; i < runs; i++) pending[i] = runOnce()
await parkedAll
gc()
gc()
const live = process.memoryUsage().heapUsed - baseline
open()
const outputs = await Promise.all(pending)
let ok = true
try {
  for (const output of outputs) if (output !== calculator.finalAnswer) throw new Error(`answered ${output}`)
  checkRun(library.name, calculator, calculator.finalAnswer, counters, runs)
} catch (error) {
  ok = false
  console.error(String(error))
}
console.log(JSON.stringify({ bytesPerRun: live / runs, ok }))
