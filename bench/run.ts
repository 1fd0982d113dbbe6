/**
 * `npm run bench` (builds first, then `node --expose-gc --import tsx/esm bench/run.ts`): the fair bench of
 * issue #20. Our library is measured as the built package (`dist/`; `BENCH_OURS=src` for the sources).
 * `tsx/esm` compiles the bench's own TypeScript and leaves `require` to Node: tsx's `require` hook would
 * hand our lazily loaded `effect/Stream` a transpiled copy of Effect (2× our per-delta cost), which no
 * user's plain `node` does.
 * Prints figures; asserts nothing about speed (it does check that every library ran every scenario).
 * Progress (a line as each section starts, with the time so far) goes to stderr, the figures to stdout.
 *
 * Sections (`BENCH_ONLY=calculator,memory,scaling,micro,streaming,providers,approval,resume,composition,cold,durable`):
 *   calculator   wall and CPU time per run, ours ÷ floor     BENCH_ROUNDS (7), BENCH_ROUND_MS (500)
 *   memory       live KB per in-flight run, a process each   BENCH_MEMORY_RUNS (5000), BENCH_MEMORY_ROUNDS (3)
 *   scaling      per-turn cost at 1/8/32/128/200×10KB turns  BENCH_SCALING_ROUNDS (3), BENCH_SCALING_MS (300)
 *   micro        our hot spots
 *   streaming    first delta and per delta, every library    BENCH_STREAM_RUNS (200)
 *   providers    the same through each library's provider over the real wire (OpenAI, Anthropic, Gemini,
 *                Ollama) from a loopback server               BENCH_PROVIDER_RUNS (50), BENCH_PROVIDER_PACE (read)
 *   approval     suspend + snapshot + resume vs a plain run, every library
 *   resume       a run continued from its snapshot vs the same work in a fresh run, every library
 *   composition  per child run: agent as tool, pipeline stage, every library
 *   cold         import + one run in a fresh `node`          BENCH_COLD_RUNS (7)
 *   durable      bench/durable.ts (durable runs; PostgreSQL rows with DATABASE_URL)
 */
import { cpus, loadavg, totalmem } from "node:os"
import { calculator, checkRun, stepsPerRun } from "./calculator/script.ts"
import { libraries } from "./libraries.ts"
import { collect, interleavedRounds, show } from "./measure.ts"
import { liveMemory } from "./memory.ts"
import { oursSource } from "./ours-lib.ts"

const knob = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim())
const section = (name: string) => only === undefined || only.includes(name)

// Progress goes to stderr, one line as each section starts, so the figures on stdout stay clean and a
// run of several minutes is never silent.
const sections = ["calculator", "memory", "scaling", "micro", "streaming", "providers", "approval", "resume", "composition", "cold", "durable"].filter(section)
const benchStart = Date.now()
let sectionsStarted = 0
const elapsed = () => `${((Date.now() - benchStart) / 1000).toFixed(1)} s`
const progress = (name: string, what: string) => process.stderr.write(`[bench ${++sectionsStarted}/${sections.length}] ${name}: ${what} (at ${elapsed()})\n`)

console.log(
  `machine: ${cpus()[0]?.model ?? "unknown CPU"} x${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ` +
    `${process.platform}; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}; ours measured from ${oursSource}; ` +
    `gc between subjects: ${(globalThis as { gc?: unknown }).gc !== undefined}`
)

const keyOf = (key: string) => libraries.findIndex((library) => library.key === key)

if (section("calculator")) {
  const rounds = knob("BENCH_ROUNDS", 7)
  const roundMs = knob("BENCH_ROUND_MS", 500)
  progress("calculator", `${libraries.length} libraries, ${rounds} interleaved rounds of ${roundMs} ms each after a warm-up`)
  const subjects = libraries.map((library) => {
    const counters = { modelCalls: 0, toolRuns: 0 }
    return { library, counters, runOnce: library.makeRunner(calculator, { counters }) }
  })
  for (const subject of subjects) checkRun(subject.library.name, calculator, await subject.runOnce(), subject.counters)
  const timed = await interleavedRounds(subjects.map((s) => s.runOnce), { rounds, roundMs })
  const ours = timed[keyOf("ours")]!
  const floor = timed[keyOf("floor")]!
  const effectFloor = timed[keyOf("floor-effect")]!
  console.log(
    `\nCalculator agent (${stepsPerRun(calculator)} model calls, ${calculator.turns} tool runs per run; async mocks and tools, usage reported): ` +
      `median (min–max) of ${rounds} interleaved rounds of ${roundMs} ms after a warm-up round`
  )
  console.table(timed.map((t, index) => ({
    library: subjects[index]!.library.name,
    "µs/run wall": show(t.wallUs),
    "µs/run CPU": show(t.cpuUs),
    "runs/s": Math.round(1e6 / t.wallUs.median),
    "wall ÷ ours": +(t.wallUs.median / ours.wallUs.median).toFixed(2),
    "CPU ÷ ours": +(t.cpuUs.median / ours.cpuUs.median).toFixed(2)
  })))
  console.log(
    `ours ÷ floor per run: wall ${(ours.wallUs.median / floor.wallUs.median).toFixed(1)}×, CPU ${(ours.cpuUs.median / floor.cpuUs.median).toFixed(1)}× ` +
      `(ours ${ours.wallUs.median.toFixed(1)} µs, floor ${floor.wallUs.median.toFixed(1)} µs); ` +
      `ours ÷ Effect floor: wall ${(ours.wallUs.median / effectFloor.wallUs.median).toFixed(1)}×, CPU ${(ours.cpuUs.median / effectFloor.cpuUs.median).toFixed(1)}× ` +
      `(Effect floor ${effectFloor.wallUs.median.toFixed(1)} µs, ${(effectFloor.wallUs.median / floor.wallUs.median).toFixed(1)}× the floor)`
  )
}

if (section("memory")) {
  const runs = knob("BENCH_MEMORY_RUNS", 5000)
  const rounds = knob("BENCH_MEMORY_ROUNDS", 3)
  progress("memory", `${runs} parked runs, one process per library and round (${libraries.length} libraries × ${rounds} rounds)`)
  const memory = liveMemory(libraries, { runs, rounds })
  console.log(`\nLive memory per in-flight run: ${runs} calculator runs parked in their third model call, gc() twice, heapUsed delta ÷ ${runs}; one process per library and round, ${rounds} rounds`)
  console.table(memory.map((m, index) => ({ library: libraries[index]!.name, "KB/run (min–max)": show(m.kbPerRun, 2), runs: Math.min(runs, libraries[index]!.memoryRuns ?? runs), "all ran": m.ok })))
}

if (section("scaling")) {
  collect()
  const { runScaling } = await import("./scaling.ts")
  const rounds = knob("BENCH_SCALING_ROUNDS", 3)
  const roundMs = knob("BENCH_SCALING_MS", 300)
  progress("scaling", `5 run sizes, ${rounds} rounds of ${roundMs} ms`)
  console.log(`\nPer-turn cost as runs grow (wall µs per model call; median (min–max) of ${rounds} interleaved rounds of ${roundMs} ms)`)
  console.table(await runScaling(libraries.filter((l) => l.key !== "ai"), { rounds, roundMs }))
}

if (section("micro")) {
  progress("micro", "our hot spots")
  const { runMicro } = await import("./micro.ts")
  const micro = runMicro()
  console.log("\nOur hot spots (medians)")
  console.table([
    { what: "tool JSON Schema + decoder for a 50-field Schema", value: `${(micro.generationMs * 1000).toFixed(0)} µs` },
    { what: "decode 50-field arguments (JSON string)", value: `${micro.wideDecodeUs.toFixed(1)} µs` },
    { what: "decode calculator arguments (JSON string)", value: `${micro.calcDecodeUs.toFixed(2)} µs` },
    { what: "pickTools over 1,000 tools", value: `${micro.pickMs.toFixed(2)} ms` }
  ])
}

if (section("streaming")) {
  collect()
  const { runStreaming } = await import("./streaming.ts")
  const runs = knob("BENCH_STREAM_RUNS", 200)
  progress("streaming", `${runs} runs per library`)
  console.log(`\nStreaming: the same mock stream of 200 text deltas, usage reported (median (min–max) of ${runs} runs, libraries interleaved in blocks of runs)`)
  console.table(await runStreaming({ runs }))
}

if (section("providers")) {
  collect()
  const { runProviderStreaming } = await import("./provider-streaming.ts")
  const runs = knob("BENCH_PROVIDER_RUNS", 50)
  const pace = process.env.BENCH_PROVIDER_PACE === "burst" ? "burst" : "read"
  progress("providers", `4 wire formats, ${runs} runs per library and wire, then 7 rounds of CPU per delta`)
  console.log(
    `\nStreaming through the providers: 200 text deltas in each provider's streaming wire format from a loopback server ` +
      `(${pace === "read" ? "a delta per read, the next sent when the consumer saw the previous one" : "the whole body in one write"}), ` +
      `each library's own provider; median (min–max) of ${runs} runs, subjects interleaved run by run; CPU per delta: runs of 200 minus runs of 1, 7 rounds`
  )
  console.table(await runProviderStreaming({ runs, pace }))
}

/** The rounds of the overhead sections (approval, composition): the calculator's, half as long. */
const overheadRounds = () => ({ rounds: knob("BENCH_ROUNDS", 7), roundMs: knob("BENCH_ROUND_MS", 500) / 2 })

if (section("approval")) {
  collect()
  const { runApproval } = await import("./approval.ts")
  const { rounds, roundMs } = overheadRounds()
  progress("approval", `${rounds} rounds of ${roundMs} ms`)
  console.log(
    "\nApproval: the calculator with `multiply` needing approval: run → suspended → state serialised to a string (the snapshot) → read back → approve → resume → 17, " +
      `beside each library's run without approval; median (min–max) of ${rounds} interleaved rounds of ${roundMs} ms`
  )
  console.table(await runApproval({ rounds, roundMs }))
}

if (section("resume")) {
  collect()
  const { runResume } = await import("./approval.ts")
  const { rounds, roundMs } = overheadRounds()
  progress("resume", `${rounds} rounds of ${roundMs} ms`)
  console.log(
    "\nResume path: a run continued from its snapshot string (read back, approve, continue to 17: 2 model calls, 2 tool runs) against a fresh whole run " +
      `(4 model calls, 3 tool runs) and the run to the suspension; median (min–max) of ${rounds} interleaved rounds of ${roundMs} ms`
  )
  console.table(await runResume({ rounds, roundMs }))
}

if (section("composition")) {
  collect()
  const { runComposition } = await import("./composition.ts")
  const { rounds, roundMs } = overheadRounds()
  progress("composition", `${rounds} rounds of ${roundMs} ms`)
  console.log(
    "\nComposition: cost per child run through agent-as-tool ((parent + 3 child-as-tool calls − parent + 3 plain tool calls) ÷ 3) and per stage of a 3-agent chain, " +
      `beside the child run directly; median (min–max) of ${rounds} interleaved rounds of ${roundMs} ms`
  )
  console.table(await runComposition({ rounds, roundMs }))
}

if (section("cold")) {
  const { runColdStart } = await import("./cold-start.ts")
  const runs = knob("BENCH_COLD_RUNS", 7)
  progress("cold", `${runs} fresh processes per library`)
  console.log(`\nCold start: a fresh \`node\` process importing the built package and running the calculator once (median (min–max) of ${runs}, interleaved)`)
  console.table(runColdStart({ runs }))
}

// --- durable runs (#18): cost per step, durable against in-memory (PostgreSQL rows when DATABASE_URL is set).
if (section("durable")) {
  progress("durable", "durable against in-memory runs, engines interleaved")
  collect()
  const { durableFigures, durableRows } = await import("./durable.ts")
  console.log("\nDurable runs: cost per step, durable against in-memory, median (min–max) of interleaved rounds (bench/durable.ts)")
  console.table(durableRows(await durableFigures()))
}

process.stderr.write(`[bench] done: ${sections.length} sections in ${elapsed()}\n`)
