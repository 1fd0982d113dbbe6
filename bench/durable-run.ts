/**
 * `npm run bench:durable`: the durable engines' long sections, each printing a progress line, then its
 * figures as markdown (what bench/README.md "Durable runs" gives).
 * Sections (`BENCH_ONLY=write-path,pglite-floor,suspended,throughput,ready`):
 *   write-path   bench/durable-write-path.ts (a step's statements and time, embedded and PostgreSQL)
 *   pglite-floor bench/durable-pglite-floor.ts (what one call into PGlite costs: select 1, an insert, the step's statement)
 *   suspended    bench/durable-suspended.ts (bytes at rest per suspended run, resume latency; BENCH_SUSPENDED_RUNS)
 *   throughput   bench/durable-throughput.ts (runs/s through two PostgreSQL runner processes)
 *   ready        bench/durable-ready.ts (a worker ready on an existing embedded store)
 */
import { existsSync, readFileSync } from "node:fs"

const only = process.env.BENCH_ONLY?.split(",")
const section = (name: string) => only === undefined || only.includes(name)
const progress = (name: string, what: string) => console.error(`[bench:durable] ${new Date().toISOString().slice(11, 19)} ${name}: ${what}`)
const load = () => (existsSync("/proc/loadavg") ? `load average ${readFileSync("/proc/loadavg", "utf8").split(" ")[0]}` : "")

if (section("write-path")) {
  progress("write-path", "a durable step's statements, embedded and PostgreSQL")
  const { writePathFigures, writePathMarkdown } = await import("./durable-write-path.ts")
  console.log(`\n### Where a durable step's time goes (${load()})\n\n${writePathMarkdown(await writePathFigures())}`)
}
if (section("pglite-floor")) {
  progress("pglite-floor", "what one call into PGlite costs, under a durable step")
  const { pgliteFloorFigures, pgliteFloorMarkdown } = await import("./durable-pglite-floor.ts")
  console.log(`\n### The floor under an embedded step (${load()})\n\n${pgliteFloorMarkdown(await pgliteFloorFigures())}`)
}
if (section("suspended")) {
  progress("suspended", "suspending runs in one embedded store")
  const { suspendedFigures, suspendedMarkdown } = await import("./durable-suspended.ts")
  console.log(`\n### Suspended runs at rest (${load()})\n\n${suspendedMarkdown(await suspendedFigures((line) => progress("suspended", line)))}`)
}
if (section("throughput")) {
  progress("throughput", "runs per second through two PostgreSQL runners")
  const { throughputFigures, throughputMarkdown } = await import("./durable-throughput.ts")
  const f = await throughputFigures((line) => progress("throughput", line))
  console.log(`\n### Two PostgreSQL runners (${load()})\n\n${f === undefined ? "no PostgreSQL at hand" : throughputMarkdown(f)}`)
}
if (section("ready")) {
  progress("ready", "a worker starting on an existing embedded store")
  const { readyFigures, readyMarkdown } = await import("./durable-ready.ts")
  console.log(`\n### Ready on an existing store\n\n${readyMarkdown(await readyFigures((line) => progress("ready", line)))}`)
}
process.exit(0)
