import { readFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"

// Examples import the package by name (`effect-agent-dsl`, `effect-agent-dsl/testing`, ...), as users
// copy them. tsconfig.json `paths` maps those names to src/ (tsc and tsx honour it, so no build is
// needed and nothing extra ships); vitest does not read `paths`, so the same map becomes its aliases.
const paths: Record<string, ReadonlyArray<string>> = JSON.parse(readFileSync(new URL("./tsconfig.json", import.meta.url), "utf8")).compilerOptions.paths
const alias = Object.entries(paths).map(([name, [target]]) => ({
  find: new RegExp(`^${name.replace(/[/.-]/g, "\\$&")}$`),
  replacement: fileURLToPath(new URL(target!, import.meta.url))
}))

// Suites that start worker processes and kill them with SIGKILL (the durable engines' crash, follow,
// cancel and start-up tests), and the embedded store opened over damaged directories (five PGlite
// start-ups): about 11 minutes of a worker's time on 2 cores, most of it processes and databases
// starting. They run with `npm run test:processes` (PROCESS_TESTS=1; CI runs it after `npm test`) and
// in `npm run test:durable`, so that `npm test` stays well under 15 minutes.
const processSuites = ["test/durable-engines/{cancel,client-only,crash-embedded,crash-postgres,example,follow,incomplete-store,start-together}.test.ts"]

// The packed package installed into fresh projects (`npm pack`, `npm install`, TypeScript and node
// runs: the consumer project and the starter), about 170 s of a worker's time: `npm run test:package`
// (PACKAGE_TESTS=1; CI runs it after `npm test`), for the same reason.
const packageSuites = ["test/package/{consumer,starter}.test.ts"]
const excluded = [...(process.env.PROCESS_TESTS === "1" ? [] : processSuites), ...(process.env.PACKAGE_TESTS === "1" ? [] : packageSuites)]

// Type tests (test/types) are ordinary test files: `tsc --noEmit` in `npm test` checks their
// `@ts-expect-error` lines, and vitest runs their `expectTypeOf` calls.
export default defineConfig({
  resolve: { alias },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...excluded],
    // Property tests run hundreds of full runs per case; 5 s is too tight on a loaded 2-core machine.
    testTimeout: 60_000,
    // Vitest's default is one worker fewer than the cores: one on the 2-core CI machine, where a third of
    // the time is each file's imports and much of the rest waits on child processes (crash tests,
    // consumers, browsers). Two workers there: `npm test` 978 → 663 s on this machine, every test passing.
    maxWorkers: Math.max(2, availableParallelism() - 1)
  }
})
