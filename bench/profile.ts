/** `node --cpu-prof --import tsx bench/profile.ts`: our calculator run in a loop, for the CPU profile. */
import { makeRunner } from "./calculator/ours.ts"
import { calculator } from "./calculator/script.ts"

const runOnce = makeRunner(calculator, { counters: { modelCalls: 0, toolRuns: 0 } })
const until = performance.now() + Number(process.env.PROFILE_MS ?? 4000)
let runs = 0
while (performance.now() < until) {
  await runOnce()
  runs++
}
console.log(`${runs} runs`)
