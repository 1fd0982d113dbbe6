/**
 * Every in-page link of README.md (`](#anchor)`) resolves to a heading, by GitHub's slug rules:
 * the heading's text (inline code kept, link targets and emphasis marks dropped), lower-cased,
 * characters other than letters, digits, spaces, `-` and `_` removed, spaces turned into `-`, and
 * `-1`, `-2`, … appended to repeated headings. Headings inside code fences do not count.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

/** GitHub's anchor for a heading's text. */
export const githubSlug = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

/** The anchors of a Markdown document's headings, repeated ones numbered as GitHub does. */
export const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fence: string | undefined
  for (const line of markdown.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0]
      else if (marker[0] === fence) fence = undefined
      continue
    }
    if (fence !== undefined) continue
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const slug = githubSlug(heading)
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return anchors
}

/** The in-page link targets of a Markdown document (outside code fences), with their line numbers. */
const linksOf = (markdown: string): Array<{ readonly anchor: string; readonly line: number }> => {
  const links: Array<{ anchor: string; line: number }> = []
  let inFence = false
  markdown.split("\n").forEach((text, i) => {
    if (/^\s*(`{3,}|~{3,})/.test(text)) inFence = !inFence
    if (inFence) return
    for (const match of text.matchAll(/\]\(#([^)\s]+)\)/g)) links.push({ anchor: decodeURIComponent(match[1]!), line: i + 1 })
  })
  return links
}

describe("README anchors", () => {
  it("the slug rules match GitHub's on known headings", () => {
    expect(githubSlug("Providers: OpenAI, Ollama, Anthropic, the AI SDK, environment")).toBe("providers-openai-ollama-anthropic-the-ai-sdk-environment")
    expect(githubSlug("Run snapshots: suspend and resume")).toBe("run-snapshots-suspend-and-resume")
    expect(githubSlug("`pickTools` and `repair`")).toBe("picktools-and-repair")
    expect(anchorsOf("# A\n## A\n```\n# A\n```\n")).toEqual(new Set(["a", "a-1"]))
  })

  it("every ](#anchor) in README.md resolves to a heading", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
    const anchors = anchorsOf(readme)
    const broken = linksOf(readme).filter((l) => !anchors.has(l.anchor)).map((l) => `line ${l.line}: #${l.anchor}`)
    expect(broken).toEqual([])
  })
})
