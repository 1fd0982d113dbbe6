/**
 * examples/starter as a user gets it: copied out of the packed tarball with the command the README
 * gives (its `npm pack effect-agent-dsl` pointed at our tarball instead of the registry), the tarball
 * installed into it next to the starter's own devDependencies, then `npm start` fed a conversation on
 * stdin (a lookup, an approved refund, a denied one), `npm run typecheck` (TypeScript 5) and `npm test`
 * (its vitest file). The tarball is the one `packed.ts` shares with consumer.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { install, packedTarball, root, run, version } from "./packed.ts"

let work = ""
let project = ""
/** The environment without any provider settings of the machine running the tests. */
const { AI_PROVIDER: _provider, AI_MODEL: _model, ...cleanEnv } = process.env

/** The README's copy command: the line of the "Start a project" block that runs `npm pack`. */
const copyCommand = (): string => {
  const line = readFileSync(join(root, "README.md"), "utf8").split("\n").find((l) => l.startsWith("npm pack effect-agent-dsl && "))
  if (line === undefined) throw new Error("README.md has no line starting with `npm pack effect-agent-dsl && `")
  return line
}

beforeAll(async () => {
  const tarball = await packedTarball()
  work = mkdtempSync(join(tmpdir(), "effect-agent-dsl-starter-"))
  run("sh", ["-c", copyCommand().replace("npm pack effect-agent-dsl", `npm pack --silent ${JSON.stringify(tarball)}`)], { cwd: work })
  project = join(work, "my-agent")
  install(project, [
    tarball,
    `effect@${version("effect")}`,
    `tsx@${version("tsx")}`,
    `typescript@${version("typescript5")}`,
    `vitest@${version("vitest")}`,
    `@types/node@${version("@types/node")}`
  ])
}, 240_000)

afterAll(() => {
  if (work !== "") rmSync(work, { recursive: true, force: true })
}, 120_000)

describe("the starter, copied with the README's command", { timeout: 120_000 }, () => {
  it("is a project of its own: its files, and the package as a dependency", () => {
    expect(run("ls", ["-A", project]).split("\n").filter(Boolean).sort()).toEqual(
      ["README.md", "node_modules", "package-lock.json", "package.json", "src", "tsconfig.json"]
    )
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"))
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["effect", "effect-agent-dsl"])
    expect(readFileSync(join(work, "my-agent/src/main.ts"), "utf8")).not.toMatch(/from "\.\.\//)
  })

  it("chats on the scripted model: a lookup, an approved refund, a denied one", () => {
    const input = ["Where is order A-1001?", "It arrived broken, please refund it", "y", "Refund A-1002 as well", "n", ""].join("\n")
    const output = run("npm", ["start", "--silent"], { cwd: project, input, env: cleanEnv })
    expect(output).toContain("model: scripted")
    expect(output).toContain("assistant> Here is what I found: A-1001: espresso machine, delivered yesterday, 249 EUR.")
    expect(output).toContain('approve refundOrder {"orderId":"A-1001","reason":"It arrived broken, please refund it"}? [y/N] y')
    expect(output).toContain("assistant> Done: refunded 249 EUR for A-1001 (It arrived broken, please refund it).")
    expect(output).toContain("assistant> I could not refund it: The call of \"refundOrder\" was denied")
    expect(output).not.toContain("refunded 89 EUR")
    expect(output.trimEnd().endsWith("bye")).toBe(true)
  })

  it("takes its model from the environment when AI_PROVIDER is set, naming what is missing", () => {
    let failure = ""
    try {
      run("npm", ["start", "--silent"], { cwd: project, input: "", env: { ...cleanEnv, AI_PROVIDER: "openai" } })
    } catch (error) {
      failure = (error as Error).message
    }
    expect(failure).toContain("failed: Invalid environment: AI_MODEL")
  })

  it("type-checks with TypeScript 5 and passes its own tests", () => {
    run("npm", ["run", "--silent", "typecheck"], { cwd: project })
    expect(run("npm", ["test", "--silent"], { cwd: project, env: { ...process.env, CI: "true" } })).toMatch(/2 passed/)
  })
})
