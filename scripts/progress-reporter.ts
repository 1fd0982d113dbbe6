/**
 * A quiet vitest reporter for long suites (`npm run test:props`): one line when a file starts, one when
 * it ends (its counts and duration), a slow test's name as it finishes, each failure with its first
 * error lines, and a summary. No live window and no per-test list, so a run of many minutes shows
 * steady progress in any terminal or log file. What the tests print is passed on as it is (lines
 * that tests cause on purpose are held back where they are made: test/support/quiet-logs.ts).
 *
 * @example
 * ```sh
 * vitest run --reporter=./scripts/progress-reporter.ts test/properties
 * ```
 */
import type { UserConsoleLog } from "vitest"
import type { Reporter, TestCase, TestModule, TestSpecification } from "vitest/node"

/** A test that takes longer than this gets its own line, so a long file shows that it moves. */
const slowMs = 10_000

const seconds = (ms: number): string => (ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`)

export default class ProgressReporter implements Reporter {
  private total = 0
  private started = 0
  private readonly index = new Map<string, number>()
  private runStart = 0

  private write(line: string): void {
    process.stdout.write(`${line}\n`)
  }

  private label(module: TestModule): string {
    const width = String(this.total).length
    return `[${String(this.index.get(module.moduleId) ?? 0).padStart(width)}/${this.total}]`
  }

  /** What the tests print still prints (a reporter that drops it would hide real warnings). */
  onUserConsoleLog(log: UserConsoleLog): void {
    const stream = log.type === "stderr" ? process.stderr : process.stdout
    stream.write(log.content.endsWith("\n") ? log.content : `${log.content}\n`)
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.total = new Set(specifications.map((s) => s.moduleId)).size
    this.runStart = Date.now()
    this.write(`${this.total} test files`)
  }

  onTestModuleStart(module: TestModule): void {
    this.index.set(module.moduleId, ++this.started)
    this.write(`${this.label(module)} start ${module.relativeModuleId}`)
  }

  onTestCaseResult(test: TestCase): void {
    const duration = test.diagnostic()?.duration ?? 0
    if (duration >= slowMs && test.result().state === "passed") this.write(`        ✓ ${test.fullName} (${seconds(duration)})`)
  }

  onTestModuleEnd(module: TestModule): void {
    const tests = [...module.children.allTests()]
    const count = (state: string) => tests.filter((t) => t.result().state === state).length
    const failed = tests.filter((t) => t.result().state === "failed")
    // The module's own test and hook time: the start line may arrive late (vitest batches its reports).
    const ms = module.diagnostic().duration
    const mark = failed.length > 0 || module.state() === "failed" ? "✗" : "✓"
    const skipped = count("skipped")
    this.write(
      `${this.label(module)} ${mark} ${module.relativeModuleId}: ${count("passed")} passed${failed.length > 0 ? `, ${failed.length} failed` : ""}${skipped > 0 ? `, ${skipped} skipped` : ""} in ${seconds(ms)}`
    )
    for (const error of module.errors()) this.write(`        ✗ (file) ${firstLines(error.message ?? String(error))}`)
    for (const test of failed) {
      this.write(`        ✗ ${test.fullName}`)
      for (const error of test.result().errors ?? []) this.write(`          ${firstLines(error.message ?? String(error))}`)
    }
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<{ readonly message?: string }>): void {
    const tests = modules.flatMap((m) => [...m.children.allTests()])
    const failed = tests.filter((t) => t.result().state === "failed").length
    const failedFiles = modules.filter((m) => m.state() === "failed").length
    for (const error of unhandledErrors) this.write(`✗ unhandled: ${firstLines(error.message ?? String(error))}`)
    this.write(
      `${modules.length} files${failedFiles > 0 ? ` (${failedFiles} failed)` : ""}, ${tests.length - failed} tests passed, ${failed} failed${unhandledErrors.length > 0 ? `, ${unhandledErrors.length} unhandled errors` : ""} in ${seconds(Date.now() - this.runStart)}`
    )
  }
}

const firstLines = (text: string, lines = 6): string => {
  const all = text.split("\n")
  return all.slice(0, lines).join("\n          ") + (all.length > lines ? " …" : "")
}
