/**
 * Edge runtimes: nothing the root entry or `effect-agent-dsl/web` imports loads a `node:` module.
 * - Both entries are bundled by esbuild for `platform: "neutral"` with everything inlined (Effect
 *   included) and every Node built-in (`node:*` and bare names such as `fs`) turned into a build error:
 *   the build succeeds, so no static import reaches one.
 * - A chat endpoint made with the web entry (test/web/edge-app.ts), bundled the same way, is evaluated
 *   in a fresh V8 context (`node:vm`) that has only Web globals (fetch types, streams, encoders, timers,
 *   Web Crypto): no `process`, no `require`, no `Buffer`. It loads, and it answers a useChat request
 *   with a streamed run (text, a tool call, the end).
 * This is a proxy for Vercel Edge and Cloudflare Workers, not those runtimes themselves.
 */
import { builtinModules } from "node:module"
import { resolve } from "node:path"
import { runInContext, createContext } from "node:vm"
import { build, type Plugin } from "esbuild"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")

const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))
/** Every import of a Node built-in is a build error naming the importer. */
const refuseNode: Plugin = {
  name: "refuse-node-builtins",
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      builtins.has(args.path) || args.path.startsWith("node:")
        ? { errors: [{ text: `${args.importer} imports the Node built-in "${args.path}"` }] }
        : undefined)
  }
}

const bundle = async (entry: string, format: "esm" | "iife") => {
  const result = await build({
    entryPoints: [resolve(root, entry)],
    bundle: true,
    write: false,
    platform: "neutral",
    mainFields: ["module", "main"],
    format,
    globalName: "edgeApp",
    define: { "import.meta.url": JSON.stringify("file:///edge/app.js") },
    plugins: [refuseNode],
    logLevel: "silent",
    tsconfig: resolve(root, "tsconfig.json")
  })
  return result.outputFiles[0]!.text
}

describe("edge runtimes", { timeout: 60_000 }, () => {
  it.each(["src/index.ts", "src/web/index.ts"])("%s bundles for a neutral platform without any Node built-in", async (entry) => {
    const code = await bundle(entry, "esm")
    expect(code).not.toMatch(/from\s*["']node:|import\(\s*["']node:|require\(\s*["']node:/)
  })

  it("the plugin does refuse a Node built-in (the check can fail)", async () => {
    await expect(bundle("src/mcp/serve.ts", "esm")).rejects.toThrow(/imports the Node built-in "node:http"/)
  })

  it("a chat endpoint of the web entry loads and streams a run in a context with only Web globals", async () => {
    const code = await bundle("test/web/edge-app.ts", "iife")
    const web = {
      Request, Response, Headers, ReadableStream, WritableStream, TransformStream, TextEncoder, TextDecoder,
      URL, URLSearchParams, AbortController, AbortSignal, Event, EventTarget, crypto: globalThis.crypto, performance,
      setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask, structuredClone, console
    }
    const context = createContext({ ...web })
    runInContext(`${code}\nglobalThis.edgeApp = edgeApp`, context)
    expect(runInContext("[typeof process, typeof require, typeof Buffer, typeof module]", context)).toEqual(["undefined", "undefined", "undefined", "undefined"])
    const handle = (context["edgeApp"] as { handle: (request: Request) => Promise<Response> }).handle
    const response = await handle(new Request("https://edge.example/api/chat", {
      method: "POST",
      body: JSON.stringify({ id: "c", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "2 + 3?" }] }], trigger: "submit-message" })
    }))
    expect(response.status).toBe(200)
    const chunks = (await response.text()).trim().split("\n\n").map((frame) => frame.slice("data: ".length)).filter((d) => d !== "[DONE]").map((d) => JSON.parse(d) as { type: string; delta?: string; output?: unknown })
    expect(chunks.filter((c) => c.type === "text-delta").map((c) => c.delta).join("")).toBe("The sum is 5.")
    expect(chunks.find((c) => c.type === "tool-output-available")?.output).toBe(5)
    expect(chunks.at(-1)?.type).toBe("finish")
  })
})
