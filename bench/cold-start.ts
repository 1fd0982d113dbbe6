/**
 * Cold start: `node bench/cold/<library>.mjs` in a fresh process (plain `node`, no TypeScript loader):
 * import the built package (ours: `effect-agent-dsl` by name, i.e. `dist/`) or the peer, then run the
 * calculator once. Ours twice: the program taking `Schema` from Effect's barrel (`"effect"`, ~330
 * modules, as most examples do) or from `effect/Schema`. Libraries interleaved, `runs` processes each; median (min–max) of: process wall time
 * (spawn to exit), the process's CPU time up to the answer (user + system: steadier than wall time on a
 * busy machine), the import, and the first run.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { show, summarize } from "./measure.ts"

const scripts: ReadonlyArray<{ readonly name: string; readonly file: string; readonly args?: ReadonlyArray<string> }> = [
  { name: 'ours (dist), program imports { Schema } from "effect"', file: "ours.mjs" },
  { name: 'ours (dist), program imports "effect/Schema"', file: "ours.mjs", args: ["direct"] },
  { name: "ai 6 (+ zod)", file: "ai.mjs" },
  { name: "@openai/agents 0.14 (+ zod)", file: "agents.mjs" },
  { name: "@mastra/core 1.71 (+ zod)", file: "mastra.mjs" }
]

export const runColdStart = (options: { readonly runs: number }) => {
  const samples = scripts.map(() => ({ wall: [] as Array<number>, cpuMs: [] as Array<number>, importMs: [] as Array<number>, runMs: [] as Array<number> }))
  for (let round = 0; round <= options.runs; round++) {
    scripts.forEach((script, index) => {
      const started = performance.now()
      const out = execFileSync(process.execPath, [fileURLToPath(new URL(`./cold/${script.file}`, import.meta.url)), ...(script.args ?? [])], { encoding: "utf8" })
      const wall = performance.now() - started
      const timing = JSON.parse(out.trim().split("\n").at(-1)!) as { importMs: number; runMs: number; cpuMs: number }
      // The first round warms the file-system cache and is discarded.
      if (round === 0) return
      samples[index]!.wall.push(wall)
      samples[index]!.cpuMs.push(timing.cpuMs)
      samples[index]!.importMs.push(timing.importMs)
      samples[index]!.runMs.push(timing.runMs)
    })
  }
  return samples.map((s, index) => ({
    library: scripts[index]!.name,
    "process wall ms": show(summarize(s.wall), 0),
    "process CPU ms": show(summarize(s.cpuMs), 0),
    "import ms": show(summarize(s.importMs), 0),
    "first run ms": show(summarize(s.runMs), 0)
  }))
}
