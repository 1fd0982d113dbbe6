/**
 * A CPU profile of one library's calculator loop in steady state: warm up, then profile (through
 * `node:inspector`, so start-up and module loading stay out of it) for PROFILE_MS (4000) ms, and write
 * bench/profiles/<library>.cpuprofile. Then `tsx bench/profile-summary.ts bench/profiles/<library>.cpuprofile`.
 * Usage: node --import tsx/esm bench/profile.ts [ours | floor | ai-zodSchema | agents]   (`npm run bench:profile`)
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { calculator } from "./calculator/script.ts"
import { libraryByKey } from "./libraries.ts"

const key = process.argv[2] ?? "ours"
const runOnce = libraryByKey(key).makeRunner(calculator, { counters: { modelCalls: 0, toolRuns: 0 } })
const loop = async (ms: number) => {
  const until = performance.now() + ms
  let runs = 0
  while (performance.now() < until) {
    await runOnce()
    runs++
  }
  return runs
}
await loop(Number(process.env.PROFILE_WARMUP_MS ?? 1500))
const session = new Session()
session.connect()
await session.post("Profiler.enable")
await session.post("Profiler.setSamplingInterval", { interval: 100 })
await session.post("Profiler.start")
const runs = await loop(Number(process.env.PROFILE_MS ?? 4000))
const { profile } = await session.post("Profiler.stop")
session.disconnect()
const dir = new URL("./profiles/", import.meta.url)
mkdirSync(dir, { recursive: true })
const out = new URL(`${key}.cpuprofile`, dir)
writeFileSync(out, JSON.stringify(profile))
console.log(`${runs} runs of ${key} profiled → ${out.pathname}`)
