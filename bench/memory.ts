/**
 * Live memory per in-flight run (see `memory-child.ts`): one fresh process per library and round,
 * libraries interleaved round by round; median (min–max) of the rounds, in KB per run.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { Library } from "./libraries.ts"
import { type Summary, summarize } from "./measure.ts"

const child = fileURLToPath(new URL("./memory-child.ts", import.meta.url))

export const liveMemory = (
  libraries: ReadonlyArray<Library>,
  options: { readonly runs: number; readonly rounds: number }
): ReadonlyArray<{ readonly kbPerRun: Summary; readonly ok: boolean }> => {
  const samples = libraries.map(() => ({ kb: [] as Array<number>, ok: true }))
  for (let round = 0; round < options.rounds; round++) {
    libraries.forEach((library, index) => {
      const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx/esm", child, library.key, String(Math.min(options.runs, library.memoryRuns ?? options.runs))], {
        encoding: "utf8",
        env: process.env
      })
      const result = JSON.parse(out.trim().split("\n").at(-1)!) as { bytesPerRun: number; ok: boolean }
      samples[index]!.kb.push(result.bytesPerRun / 1000)
      samples[index]!.ok &&= result.ok
    })
  }
  return samples.map((s) => ({ kbPerRun: summarize(s.kb), ok: s.ok }))
}
