/**
 * Generates the API reference (docs/api) from the doc comments of every public entry point, with
 * TypeDoc, typedoc-plugin-markdown and typedoc-vitepress-theme (options in typedoc.json).
 *
 * TypeDoc needs TypeScript's compiler API, which TypeScript 7 (our `tsc`) does not have: this script
 * hands TypeDoc the `typescript5` alias (TypeScript 5.9) through a module resolution hook, so the
 * project keeps one `typescript` for type checking.
 *
 * Every export of every entry point must carry a doc comment (on itself or on its signatures): the
 * script lists those that do not and fails, so the reference cannot silently leave anything out.
 * (TypeDoc's own validation.notDocumented also demands comments on every property of every type
 * literal, a different rule; TypeDoc's other warnings, such as broken {@link}s, are errors too:
 * treatWarningsAsErrors.)
 */
import { register } from "node:module"

const hook = `
export async function resolve(specifier, context, next) {
  if (specifier === "typescript" && context.parentURL && context.parentURL.includes("/node_modules/typedoc")) {
    return next("typescript5", context)
  }
  return next(specifier, context)
}`
register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url)

const { Application, ArgumentsReader, LogLevel, ReflectionKind, PackageJsonReader, TSConfigReader, TypeDocReader } = await import("typedoc")

// The readers TypeDoc's own CLI uses, so command-line options (`--entryPoints`, `--out`) override typedoc.json.
const readers = [new ArgumentsReader(0), new TypeDocReader(), new PackageJsonReader(), new TSConfigReader(), new ArgumentsReader(300).ignoreErrors()]
const app = await Application.bootstrapWithPlugins({ options: "typedoc.json" }, readers)
if (app.options.getValue("logLevel") === LogLevel.Info) app.options.setValue("logLevel", LogLevel.Warn)
const project = await app.convert()
if (project === undefined) {
  console.error("docs-typedoc: TypeDoc could not convert the entry points")
  process.exit(1)
}
app.validate(project)

/** An export is documented when it, or one of its signatures, has a comment. */
const documented = (reflection) => {
  if (reflection.hasComment()) return true
  // An export that another entry point also exports is a reference to one declaration.
  if (reflection.isReference?.()) {
    const target = reflection.tryGetTargetReflectionDeep()
    return target !== undefined && target !== reflection && documented(target)
  }
  const signatures = [
    ...(reflection.signatures ?? []),
    ...(reflection.type?.declaration?.signatures ?? []),
    ...(reflection.getSignature ? [reflection.getSignature] : [])
  ]
  return signatures.some((signature) => signature.hasComment())
}
const undocumented = []
// Several entry points make one module each; a single one puts its exports on the project itself.
const modules = project.children ?? []
const entries = modules.length > 0 && modules.every((child) => child.kindOf(ReflectionKind.Module)) ? modules : [project]
for (const entry of entries) {
  for (const exported of entry.children ?? []) {
    if (!documented(exported)) undocumented.push(`${entry.name}: ${exported.name}`)
  }
}
if (undocumented.length > 0) {
  console.error(`docs-typedoc: ${undocumented.length} public export(s) without a doc comment:\n  ${undocumented.join("\n  ")}`)
  process.exit(1)
}
if (app.logger.hasErrors() || app.logger.hasWarnings()) {
  console.error("docs-typedoc: the API reference has problems (above); every public export needs a doc comment")
  process.exit(1)
}
await app.generateOutputs(project)
if (app.logger.hasErrors() || app.logger.hasWarnings()) process.exit(1)
