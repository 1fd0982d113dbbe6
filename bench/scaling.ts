/**
 * Per-turn cost as runs get longer: 1, 8, 32 and 128 tool-call turns, and 200 turns with 10 KB tool
 * results, for every library; libraries interleaved round by round. Per-turn cost = wall time per run ÷
 * model calls (turns + 1); growth = per-turn cost at that length ÷ per-turn cost at 1 turn (flat ≈ 1).
 */
import { checkRun, type Scenario, scaling, stepsPerRun } from "./calculator/script.ts"
import type { Library } from "./libraries.ts"
import { interleavedRounds, show } from "./measure.ts"

export const scalingScenarios: ReadonlyArray<Scenario> = [scaling(1), scaling(8), scaling(32), scaling(128), scaling(200, 10_000)]

export const runScaling = async (libraries: ReadonlyArray<Library>, options: { readonly rounds: number; readonly roundMs: number }) => {
  const rows: Array<Record<string, string | number>> = []
  const base = new Map<string, number>()
  for (const scenario of scalingScenarios) {
    const subjects = libraries.map((library) => {
      const counters = { modelCalls: 0, toolRuns: 0 }
      return { library, counters, runOnce: library.makeRunner(scenario, { counters }) }
    })
    for (const subject of subjects) {
      checkRun(subject.library.name, scenario, await subject.runOnce(), subject.counters)
    }
    const timed = await interleavedRounds(subjects.map((s) => s.runOnce), options)
    timed.forEach((t, index) => {
      const name = subjects[index]!.library.name
      const perTurn = t.wallUs.median / stepsPerRun(scenario)
      if (scenario.turns === 1) base.set(name, perTurn)
      const scale = (x: number) => x / stepsPerRun(scenario)
      rows.push({
        scenario: scenario.name,
        library: name,
        "µs/run": Math.round(t.wallUs.median),
        "µs/turn (min–max)": show({ median: perTurn, min: scale(t.wallUs.min), max: scale(t.wallUs.max) }),
        "growth vs 1 turn": +(perTurn / (base.get(name) ?? perTurn)).toFixed(2)
      })
    })
  }
  return rows
}
