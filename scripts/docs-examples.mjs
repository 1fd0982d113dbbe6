/**
 * Compiles every TypeScript code block of the guides (docs/**\/*.md, the API reference excepted) and of
 * README.md as a consumer's module: imports use the package name (`effect-agent-dsl`, `effect-agent-dsl/testing`,
 * ...), which tsconfig.json `paths` resolves to src/. All blocks go into one tsc program (TypeScript 7's
 * `tsc`), so the whole check takes seconds. Run by test/docs/examples.test.ts inside `npm test`;
 * `node scripts/docs-examples.mjs` prints the same report. The compiler options are the project's
 * (strict, NodeNext, noUncheckedIndexedAccess) less three that a consumer's project need not have
 * (the install guide says so): exactOptionalPropertyTypes, verbatimModuleSyntax, isolatedModules.
 *
 * Block kinds, by the fence's info string:
 * - ` ```ts ` (or `typescript`): a complete module. It compiles as written: imports included, nothing assumed.
 * - ` ```ts partial `: a fragment that names values defined elsewhere on the page (a model, an agent).
 *   It is still compiled: names it uses that the main entry point or `effect` export are imported for it,
 *   and only "cannot find name" errors are forgiven; every other error fails the check.
 * - any other language (sh, kotlin, json, text): not compiled.
 * Lines up to a `// ---cut---` line compile but are hidden on the page (docs/.vitepress/hide-cut.mts),
 * for set-up a reader does not need to see.
 */
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

export const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const docs = join(root, "docs")
const cache = join(root, "node_modules", ".cache")

/**
 * Error codes a partial block may have: names it uses but the page defines elsewhere (2304, 2552, 2503,
 * 18004), and what follows from not knowing their types (implicit any of a callback's parameters: 7005,
 * 7006, 7031, 7034; an unknown value: 18046).
 */
const forgivenInPartial = new Set([2304, 2552, 2503, 18004, 7005, 7006, 7031, 7034, 18046])

/** The markdown files whose code blocks are checked: README.md (the front page), the guides and the home page. */
export const markdownFiles = () => {
  const walk = (dir) =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      if ((name === "api" || name === "public") && dir === docs) return []
      if (name.startsWith(".") || name === "node_modules") return []
      if (statSync(path).isDirectory()) return walk(path)
      return name.endsWith(".md") ? [path] : []
    })
  return [join(root, "README.md"), ...walk(docs)]
}

/** The fenced code blocks of `markdown`: language, flags, code and the line (1-based) of its first code line. */
export const extractBlocks = (markdown) => {
  const blocks = []
  const lines = markdown.split("\n")
  let open = undefined
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]
    const fence = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(line)
    if (open === undefined) {
      if (fence === null) continue
      const [lang = "", ...flags] = fence[3].trim().split(/\s+/)
      open = { indent: fence[1].length, marker: fence[2], lang: lang.replace(/\{.*$/, ""), flags, start: index + 2, code: [] }
    } else if (fence !== null && fence[2].startsWith(open.marker) && fence[3].trim() === "") {
      blocks.push({ lang: open.lang, flags: open.flags, line: open.start, code: open.code.join("\n") })
      open = undefined
    } else {
      open.code.push(line.slice(Math.min(open.indent, line.length - line.trimStart().length)))
    }
  }
  return blocks
}

const typescriptLangs = new Set(["ts", "typescript", "mts"])

/** The names an entry point exports, read from its `export { ... }` lists. */
const exportedNames = (file) => {
  const names = new Set()
  const text = readFileSync(join(root, file), "utf8")
  for (const match of text.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const part of match[2].split(",")) {
      const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/).pop()?.trim()
      if (name) names.add(name)
    }
  }
  return names
}

/** Entry points whose names a partial block gets imported, first match wins. */
const entryPoints = [
  ["effect-agent-dsl", "src/index.ts"],
  ["effect-agent-dsl/testing", "src/testing/index.ts"],
  ["effect-agent-dsl/web", "src/web/index.ts"],
  ["effect-agent-dsl/mcp", "src/mcp/index.ts"],
  ["effect-agent-dsl/durable", "src/durable/index.ts"],
  ["effect-agent-dsl/evals", "src/evals/index.ts"],
  ["effect-agent-dsl/testing/arbitraries", "src/testing/arbitraries.ts"],
  ["effect-agent-dsl/ag-ui", "src/protocols/ag-ui/index.ts"],
  ["effect-agent-dsl/a2a", "src/protocols/a2a/index.ts"],
  ["effect-agent-dsl/postgres", "src/postgres/index.ts"],
  ["effect-agent-dsl/studio", "src/studio/index.ts"]
]

/** Other names a partial block may use without importing them. */
const otherModules = [
  ["vitest", ["describe", "it", "test", "expect"]],
  ["node:http", ["createServer"]]
]

const effectModules = ["Effect", "Schema", "Stream", "Layer", "Context", "Option", "Result", "Exit", "Cause", "Fiber", "Duration", "Data", "Console", "Schedule", "Ref", "Queue", "Chunk"]

/** For a partial block: import lines for the package's, Effect's and a few others' names it uses but does not bind. */
const importsFor = (code, modules) => {
  const lines = []
  const used = new Set(code.match(/[A-Za-z_$][\w$]*/g) ?? [])
  const bound = (name) =>
    new RegExp(`(?:\\b(?:const|let|var|function|class|type|interface|enum|import)\\s+|import\\s*(?:type\\s*)?\\{[^}]*\\b|\\bas\\s+)${name.replace(/\$/g, "\\$")}\\b`).test(code)
  const taken = new Set()
  if (/\btest\.prop\b/.test(code) && !bound("test")) {
    taken.add("test")
    lines.push(`import { test } from "@fast-check/vitest"`)
  }
  for (const [specifier, names] of modules) {
    const wanted = [...names].filter((name) => used.has(name) && !bound(name) && !taken.has(name))
    wanted.forEach((name) => taken.add(name))
    if (wanted.length > 0) lines.push(`import { ${wanted.join(", ")} } from "${specifier}"`)
  }
  return lines
}

/** Compiles every checked block; resolves to the problems found (empty when all compile) and the count. */
export const checkExamples = async ({ files = markdownFiles() } = {}) => {
  mkdirSync(cache, { recursive: true })
  // Inside the project, so the blocks resolve its node_modules and tsconfig paths; one folder per check.
  const work = mkdtempSync(join(cache, "docs-examples-"))
  try {
    return await compileBlocks(files, work)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const compileBlocks = async (files, work) => {
  const modules = [
    ...entryPoints.map(([specifier, file]) => [specifier, exportedNames(file)]),
    ["effect", effectModules],
    ...otherModules
  ]
  const sources = new Map()
  let count = 0
  for (const file of files) {
    const name = relative(root, file)
    extractBlocks(readFileSync(file, "utf8")).forEach((block, index) => {
      if (!typescriptLangs.has(block.lang)) return
      count++
      const partial = block.flags.includes("partial")
      const prelude = partial ? importsFor(block.code, modules) : []
      // A block written as the body of an `Effect.gen` (a `yield*` at the top level) is compiled inside
      // one; its imports and `declare`s move above the generator, blank lines keeping the line numbers.
      const body = /^(?!\/\/)(?=\S).*\byield\*/m.test(block.code) && !/function\*/.test(block.code)
      const path = join(work, `${name.replace(/[^\w]+/g, "_")}_${index}.ts`)
      let code = block.code
      if (body) {
        const hoisted = (line) => /^(import|declare)\s/.test(line)
        prelude.push(...code.split("\n").filter(hoisted), `import { Effect as GeneratedEffect } from "effect"`, "export const generated = GeneratedEffect.gen(function* () {")
        code = code.split("\n").map((line) => (hoisted(line) ? "" : line)).join("\n")
      }
      writeFileSync(path, [...prelude, code, ...(body ? ["})"] : []), "export {}", ""].join("\n"))
      sources.set(path, { file: name, line: block.line, offset: prelude.length, partial })
    })
  }
  writeFileSync(
    join(work, "tsconfig.json"),
    JSON.stringify({ extends: relative(work, join(root, "tsconfig.json")), compilerOptions: { noUnusedLocals: false, verbatimModuleSyntax: false, isolatedModules: false, exactOptionalPropertyTypes: false }, include: ["*.ts"] })
  )
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc")
  const output = await new Promise((resolve) =>
    execFile(process.execPath, [tsc, "-p", join(work, "tsconfig.json"), "--pretty", "false"], { maxBuffer: 64 * 1024 * 1024 }, (_error, stdout, stderr) =>
      resolve(`${stdout}${stderr}`)
    )
  )
  const problems = []
  for (const line of output.split("\n")) {
    const match = /^(.+?)\((\d+),(\d+)\): error TS(\d+): (.*)$/.exec(line)
    if (match === null) {
      if (line.trim() !== "" && !line.startsWith(" ") && problems.length === 0 && !/^\S+\(\d+,\d+\)/.test(line)) problems.push(line)
      continue
    }
    const [, path, row, column, code, message] = match
    const source = sources.get(join(work, relative(work, join(work, path))))
      ?? [...sources.entries()].find(([p]) => p.endsWith(path) || path.endsWith(relative(root, p)))?.[1]
    // Errors outside the blocks (in src/) are `tsc --noEmit`'s to report, not this check's.
    if (source === undefined) continue
    if (source.partial && forgivenInPartial.has(Number(code))) continue
    // A partial block may import a module of the reader's own project (`./assistant.ts`, `@/lib/chat`).
    if (source.partial && (code === "2307" || code === "2834" || code === "2835") && /'(\.|@\/)/.test(message)) continue
    problems.push(`${source.file}:${source.line + Number(row) - 1 - source.offset}:${column}: TS${code} ${message}`)
  }
  return { count, problems }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { count, problems } = await checkExamples()
  if (problems.length > 0) {
    console.error(problems.join("\n"))
    console.error(`docs-examples: ${problems.length} problem(s) in ${count} code blocks`)
    process.exit(1)
  }
  console.log(`docs-examples: ${count} code blocks compile`)
}
