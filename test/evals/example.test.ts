/**
 * `npm run example:eval` works with no network: replayed from its cassettes it passes its baseline
 * (exit code 0); with the calculator's cassette re-recorded worse (one answer changed), the
 * comparison flags the regression and the exit code is 1.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const example = fileURLToPath(new URL("../../examples/evals.ts", import.meta.url))
const dir = fileURLToPath(new URL("../../examples/evals/", import.meta.url))

describe("examples/evals.ts", () => {
  it("replays its cassettes and meets its baseline", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", example], { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] })
    expect(out).toContain("calculator: 3 passed, 0 failed, 0 errored, 0 skipped")
    expect(out).toMatch(/two-steps\s+pass/)
    expect(out).toContain("no regression against the baseline")
  })

  it("exits 1 on a regression against the baseline", () => {
    const altered = mkdtempSync(join(tmpdir(), "eval-example-"))
    for (const file of ["judge.cassette.json", "baseline.json"]) copyFileSync(join(dir, file), join(altered, file))
    // The model now answers 43 to 6 * 7.
    const cassette = readFileSync(join(dir, "calculator.cassette.json"), "utf8")
    expect(cassette).toContain('"content": "42"')
    writeFileSync(join(altered, "calculator.cassette.json"), cassette.replace('"content": "42"', '"content": "43"'))
    const run = spawnSync(process.execPath, ["--import", "tsx", example], { encoding: "utf8", timeout: 60_000, env: { ...process.env, EVAL_DIR: altered } })
    expect(run.stdout).toMatch(/product\s+FAIL/)
    expect(run.stdout).toContain("REGRESSION case product: passed → failed")
    expect(run.stdout).toContain("REGRESSION exact: mean 1.000 → 0.667")
    expect(run.status).toBe(1)
  })
})
