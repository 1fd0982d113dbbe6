/**
 * Writes llms.txt and llms-full.txt (https://llmstxt.org) into docs/public, which the VitePress build
 * copies to the site's root, from the same guide list as the sidebar (docs/.vitepress/guides.mjs):
 * llms.txt links every guide's Markdown (copied next to its page as /guide/<name>.md) and the API
 * reference's entry points (its Markdown copied as /api/**.md); llms-full.txt is every guide in order. Runs after TypeDoc (it reads the API
 * sidebar) and before VitePress (so the pages may link to these files).
 * Set-up lines hidden on the pages (up to `// ---cut---`) are hidden here too.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { guides } from "../docs/.vitepress/guides.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const docs = join(root, "docs")
const dist = join(docs, "public")

/** A guide's Markdown as a reader sees it: hidden set-up lines removed. */
const readable = (markdown) => markdown.replace(/^([ \t]*)(```|~~~)([^\n]*)\n[\s\S]*?^[ \t]*\/\/ ---cut---\n/gm, "$1$2$3\n")

/** The first paragraph after a page's title: its one-line summary. */
const summary = (markdown) => markdown.split("\n\n").find((part) => part.trim() !== "" && !part.startsWith("#"))?.replace(/\s+/g, " ").trim() ?? ""

const pages = guides.flatMap((group) => group.items.map((item) => ({ group: group.text, ...item })))
const lines = [
  "# effect-agent-dsl",
  "",
  "> A typed agent DSL for TypeScript on Effect: tool handles typed from Effect Schemas, per-skill tool allowlists, budgets, recovery handlers, human approval with resumable JSON snapshots, streaming (SSE, AI SDK UI stream, AG-UI), MCP and A2A, durable runs on effect/workflow, and providers for OpenAI, Anthropic, Gemini, Ollama and any AI SDK model.",
  "",
  "Every guide below is Markdown; llms-full.txt holds them all in one file.",
  ""
]
let full = ["# effect-agent-dsl: the guides", ""]
for (const group of guides) {
  lines.push(`## ${group.text}`, "")
  for (const item of group.items) {
    const markdown = readable(readFileSync(join(docs, `${item.link}.md`), "utf8"))
    mkdirSync(dirname(join(dist, `${item.link}.md`)), { recursive: true })
    writeFileSync(join(dist, `${item.link}.md`), markdown)
    lines.push(`- [${item.text}](${item.link}.md): ${summary(markdown)}`)
    full.push(markdown.trim(), "")
  }
  lines.push("")
}
// The API reference's Markdown (TypeDoc's output) is published beside its pages too, and llms.txt
// links each entry point's index, as listed by the reference's own index page.
cpSync(join(docs, "api"), join(dist, "api"), { recursive: true, filter: (path) => !path.endsWith(".json") })
lines.push("## API reference", "")
for (const [, name, path] of readFileSync(join(docs, "api", "index.md"), "utf8").matchAll(/^- \[([^\]]+)\]\(([^)]+)\)$/gm)) {
  lines.push(`- [${name}](/api/${path}): the exports of \`${name}\`, from their doc comments`)
}
writeFileSync(join(dist, "llms.txt"), `${lines.join("\n").trim()}\n`)
writeFileSync(join(dist, "llms-full.txt"), `${full.join("\n").trim()}\n`)
if (pages.length === 0) throw new Error("docs-llms: no guides")
