import { defineConfig } from "vitest/config"

// Type tests (test/types) are ordinary test files: `tsc --noEmit` in `npm test` checks their
// `@ts-expect-error` lines, and vitest runs their `expectTypeOf` calls.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Property tests run hundreds of full runs per case; 5 s is too tight on a loaded 2-core machine.
    testTimeout: 60_000
  }
})
