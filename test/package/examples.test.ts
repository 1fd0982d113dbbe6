/**
 * The examples are code users copy: they import the package by its name (`effect-agent-dsl`,
 * `effect-agent-dsl/testing`, ...), never the repo's sources by a relative path, and the starter never
 * reaches outside its own folder. Inside this repo those names resolve to src/ through tsconfig.json
 * `paths` (tsc, tsx) and the aliases vitest.config.ts makes of them: this file also checks that the map
 * covers exactly the entry points of package.json `exports`, each to the source of its built file.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { root } from "./packed.ts"

const examples = join(root, "examples")

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === "node_modules") return []
    if (statSync(path).isDirectory()) return sources(path)
    return /\.(ts|mts|js|mjs)$/.test(name) ? [path] : []
  })

/** Every module specifier of `code`: static imports and re-exports, dynamic `import(...)`, `require(...)`. */
const specifiers = (code: string): ReadonlyArray<string> =>
  [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1]!)

/** The relative specifiers of `file` that leave `home` (`../src/...` from examples/, `../../...` from the starter). */
const escapes = (file: string, home: string): ReadonlyArray<string> =>
  specifiers(readFileSync(file, "utf8")).filter((specifier) => {
    if (!specifier.startsWith(".")) return false
    const target = resolve(dirname(file), specifier)
    return relative(home, target).startsWith("..")
  })

describe("examples", () => {
  it("finds the specifiers of every import form", () => {
    expect(specifiers(`import { a } from "x"\nexport * from "../src/y.ts"\nimport "./side.ts"\nawait import("z")\nrequire('w')`))
      .toEqual(["x", "../src/y.ts", "./side.ts", "z", "w"])
    const file = join(examples, "starter/src/a.ts")
    expect(specifiers(`import { b } from "./b.ts"\nimport { c } from "../../c.ts"`).map((s) => relative(examples, resolve(dirname(file), s)))).toEqual(["starter/src/b.ts", "c.ts"])
  })

  it("import the package by its name, never ../src (each file checked; each example uses the package by name)", () => {
    const files = sources(examples)
    expect(files.length).toBeGreaterThan(8)
    const offending = files.flatMap((file) => {
      const home = relative(examples, file).startsWith("starter") ? join(examples, "starter") : examples
      return escapes(file, home).map((specifier) => `${relative(root, file)}: ${specifier}`)
    })
    expect(offending).toEqual([])
    // Every example uses the package by name: a one-file example in that file, an example folder
    // (the starter, the reference application) in its files as a whole (its helper modules may
    // import only each other and libraries).
    const byName = (file: string) => specifiers(readFileSync(file, "utf8")).some((s) => s === "effect-agent-dsl" || s.startsWith("effect-agent-dsl/"))
    const exampleOf = (file: string) => relative(examples, file).split("/")[0]!
    const examplesUsingIt = new Set(files.filter(byName).map(exampleOf))
    expect([...new Set(files.map(exampleOf))].filter((example) => !examplesUsingIt.has(example))).toEqual([])
  })

  it("tsconfig.json paths map exactly the package's entry points, each to the source of its built file", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    const paths: Record<string, ReadonlyArray<string>> = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")).compilerOptions.paths
    const expected = Object.fromEntries(
      Object.entries(manifest.exports as Record<string, string | { default: string }>)
        .filter(([subpath, target]) => subpath !== "./package.json" && typeof target !== "string")
        .map(([subpath, target]) => [
          `${manifest.name}${subpath.slice(1)}`,
          [(target as { default: string }).default.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts")]
        ])
    )
    expect(paths).toEqual(expected)
  })

  it("inside this repo, each name is the very module of src/ (vitest's aliases from those paths; no build needed)", { timeout: 30_000 }, async () => {
    const paths: Record<string, ReadonlyArray<string>> = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")).compilerOptions.paths
    for (const [name, [target]] of Object.entries(paths)) {
      if (name.endsWith("/postgres") || name.endsWith("/arbitraries")) continue // optional peers: their own tests load them
      expect(await import(/* @vite-ignore */ name), name).toBe(await import(/* @vite-ignore */ join(root, target!)))
    }
  })
})
