import { defineConfig } from "vitest/config"

// Type tests (test/types) are ordinary test files: `tsc --noEmit` in `npm test` checks their
// `@ts-expect-error` lines, and vitest runs their `expectTypeOf` calls.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"]
  }
})
