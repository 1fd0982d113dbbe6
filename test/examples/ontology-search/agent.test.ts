// The agent on scripted models: forced submit_slots, cautious models, the investigation tools'
// safety (SELECT only, parsed with sparqljs; no SERVICE, LOAD, updates; 50-row cap), the compiled
// queries, and the fromEnv knobs.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ModelClient, type ModelRequest, toolCalls } from "effect-agent-dsl"
import { recordingModel } from "effect-agent-dsl/testing"
import { compileQuery, sparqlString } from "../../../examples/ontology-search/compile.ts"
import { correctSlots } from "../../../examples/ontology-search/corrections.ts"
import { SUBMIT_SLOTS } from "../../../examples/ontology-search/forced-choice.ts"
import { investigateSchema, investigationTools, MAX_SCHEMA_ROWS } from "../../../examples/ontology-search/investigation-tools.ts"
import { answer, search, searchAgent, settingsFromEnv, systemPrompt } from "../../../examples/ontology-search/search-agent.ts"
import { loadCatalogue, shapesTurtle } from "../../../examples/ontology-search/store.ts"

const catalogue = loadCatalogue()
const { store, vocabulary } = catalogue

// A cautious model: it investigates whenever it may, and submits only when the request forces it.
const cautious = () => {
  let discovered = 0
  const client = recordingModel(ModelClient.fromFunction((request: ModelRequest) => {
    const forced = typeof request.toolChoice === "object" && request.toolChoice.tool === SUBMIT_SLOTS
    if (!forced) {
      discovered++
      return toolCalls([{ name: "discover_values", arguments: { property: "roadTypes" } }])
    }
    return toolCalls([{ name: SUBMIT_SLOTS, arguments: { slots: { domains: ["hdmap"], filters: { roadTypes: "motoway" }, ranges: {} }, interpretation: "motorway maps", gaps: [] } }])
  }))
  return { client, discovered: () => discovered }
}

describe("forced submit_slots", () => {
  it("the catalogue has at least 5,000 assets in the data graph", () => {
    expect(catalogue.assets).toBeGreaterThanOrEqual(5000)
  })

  it("a cautious model still ends in submit_slots on step 1 (policy always)", async () => {
    const model = cautious()
    const result = await search(catalogue, model.client, "motoway maps")
    expect(model.discovered()).toBe(0)
    expect(model.client.requests).toHaveLength(1)
    expect(model.client.requests[0]!.toolChoice).toEqual({ tool: SUBMIT_SLOTS })
    expect(model.client.requests[0]!.tools.map((t) => t.name).sort()).toEqual(
      ["discover_connections", "discover_domains", "discover_properties", "discover_values", "investigate_schema", SUBMIT_SLOTS].sort())
    expect(result.slots.filters).toEqual({ roadTypes: ["motorway"] })
    expect(result.total).toBeGreaterThan(0)
  })

  it("with last-step forcing, it investigates and is forced to submit on the last step", async () => {
    const model = cautious()
    const result = await search(catalogue, model.client, "motoway maps", { maxSteps: 3, force: "last-step" })
    expect(model.discovered()).toBe(2)
    expect(model.client.requests.map((r) => r.toolChoice)).toEqual(["required", "required", { tool: SUBMIT_SLOTS }])
    expect(result.slots.confidence).toBe("medium")
  })

  it("the system prompt embeds the raw SHACL", () => {
    const prompt = systemPrompt(shapesTurtle)
    for (const s of ["sh:in", "sh:pattern", "xsd:integer", "sh:description", "sh:class"]) expect(prompt).toContain(s)
    expect(prompt).toContain(shapesTurtle.trim())
  })

  it("the five investigation tools are all readOnly", () => {
    const tools = Object.values(investigationTools(store, vocabulary))
    expect(tools.map((t) => [t.name, t.effect])).toEqual(tools.map((t) => [t.name, "readOnly"]))
    expect(tools).toHaveLength(5)
  })
})

describe("investigate_schema", () => {
  it("answers a SELECT on the schema graph", async () => {
    const r = await investigateSchema("PREFIX sh: <http://www.w3.org/ns/shacl#> SELECT ?c WHERE { ?s sh:targetClass ?c }")
    expect(r.ok && r.rows.length).toBe(3)
  })

  it.each([
    ["an update", "DROP ALL", /got an update/],
    ["an insert", "INSERT DATA { GRAPH <urn:graph:schema> { <urn:a> <urn:b> <urn:c> } }", /got an update/],
    ["LOAD", "LOAD <http://127.0.0.1:1/evil.ttl>", /got an update/],
    ["SERVICE", "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }", /SERVICE is not allowed/],
    ["nested SERVICE", "SELECT * WHERE { { ?s ?p ?o } UNION { OPTIONAL { SERVICE SILENT <http://127.0.0.1:1/> { ?s ?p ?o } } } }", /SERVICE is not allowed/],
    ["CONSTRUCT", "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", /only SELECT queries are allowed, got CONSTRUCT/],
    ["ASK", "ASK { ?s ?p ?o }", /only SELECT queries are allowed, got ASK/],
    ["FROM", "SELECT * FROM <urn:graph:data> WHERE { ?s ?p ?o }", /FROM is not allowed/],
    ["garbage", "SELECT * WHERE { ?s", /not a SPARQL query/],
    ["two statements", "SELECT * WHERE { ?s ?p ?o } ; DROP ALL", /not a SPARQL query/]
  ])("refuses %s", async (_, query, reason) => {
    const before = store.size
    const r = await investigateSchema(query)
    expect(r.ok ? "answered" : r.refused).toMatch(reason)
    expect(store.size).toBe(before)
  })

  it("a huge LIMIT of the model's own is capped before the query runs (a cartesian product answers at once)", async () => {
    const started = Date.now()
    const r = await investigateSchema("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } LIMIT 100000000")
    expect(r.ok && r.rows.length).toBe(MAX_SCHEMA_ROWS)
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("caps a huge result at 50 rows and says it was truncated", async () => {
    const r = await investigateSchema("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
    expect(r).toMatchObject({ ok: true, truncated: true })
    expect(r.ok && r.rows.length).toBe(MAX_SCHEMA_ROWS)
  })

  it("a query whose evaluation is itself huge is stopped at its time limit; the next query still runs", async () => {
    const started = Date.now()
    const slow = await investigateSchema("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g ?c ?f ?i", { timeoutMs: 300 })
    expect(slow).toEqual({ ok: false, refused: "query failed: timed out after 300 ms" })
    expect(Date.now() - started).toBeLessThan(3_000)
    const next = await investigateSchema("PREFIX sh: <http://www.w3.org/ns/shacl#> SELECT ?c WHERE { ?s sh:targetClass ?c }")
    expect(next.ok && next.rows.length).toBe(3)
  })

  it("never sees the data graph", async () => {
    const r = await investigateSchema("SELECT ?a WHERE { { ?a a <https://example.org/assets#HdMap> } UNION { GRAPH ?g { ?a a <https://example.org/assets#HdMap> } } }")
    expect(r).toEqual({ ok: true, rows: [], truncated: false })
  })
})

describe("compiled queries", () => {
  it("scenario + roadTypes joins the scenario's HD map", () => {
    const r = answer(catalogue, { slots: { domains: ["scenario"], filters: { roadTypes: "motorway" }, ranges: {} }, interpretation: "", gaps: [] }, 5000)
    expect(r.slots.domains).toEqual(["scenario", "hdmap"])
    expect(r.sparql).toContain("<https://example.org/assets#hdMap> ?join0")
    const domains = new Set(r.hits.map((h) => h.domain))
    expect(domains).toEqual(new Set(["scenario", "hdmap"]))
  })

  it("ranges and references narrow the results", () => {
    const all = answer(catalogue, { slots: { domains: ["hdmap"], filters: {}, ranges: {} }, interpretation: "", gaps: [] }).total
    const wide = answer(catalogue, { slots: { domains: ["hdmap"], filters: {}, ranges: { laneCount: { min: 4 } } }, interpretation: "", gaps: [] }).total
    expect(all).toBe(1500)
    expect(wide).toBeGreaterThan(0)
    expect(wide).toBeLessThan(all)
    const referenced = answer(catalogue, { slots: { domains: ["recording"], filters: {}, ranges: {}, references: { domain: "scenario" } }, interpretation: "", gaps: [] })
    expect(referenced.slots.reference).toBe("scenario")
    expect(referenced.total).toBeLessThan(2000)
  })

  it("escapes literals", () => {
    expect(sparqlString('a"b\\c\nd')).toBe('"a\\"b\\\\c\\nd"')
    expect(() => sparqlString("a\u0000")).toThrow()
  })

  it("property: any slots compile to a query the store accepts, with no data change", () => {
    const keys = [...vocabulary.propertyDomains.keys()]
    const term = fc.oneof(fc.string(), fc.constantFrom(...[...vocabulary.enumValues.values()].flat()), fc.constantFrom("\"} DROP ALL {\"", "<urn:x>", "?asset", "#"))
    const range = fc.record({ min: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: undefined }), max: fc.option(fc.integer(), { nil: undefined }) })
      .map(({ min, max }) => ({ ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) }))
    const slots = fc.record({
      domains: fc.array(fc.oneof(fc.constantFrom(...vocabulary.domains.keys()), fc.string()), { maxLength: 4 }),
      filters: fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string()), fc.oneof(term, fc.array(term, { maxLength: 3 })), { maxKeys: 4 }),
      ranges: fc.dictionary(fc.oneof(fc.constantFrom("laneCount", "duration", "egoSpeed", "area", "frameRate"), fc.string()), range, { maxKeys: 3 }),
      references: fc.option(fc.oneof(fc.record({ domain: fc.constantFrom("hdmap", "scenario", "x") }), fc.array(fc.record({ domain: fc.constantFrom("hdmap", "scenario", "recording") }), { maxLength: 3 })), { nil: undefined })
    }).map((s) => (s.references === undefined ? { domains: s.domains, filters: s.filters, ranges: s.ranges } : s))
    const size = store.size
    fc.assert(fc.property(slots, (s) => {
      const corrected = correctSlots(vocabulary, { slots: s, interpretation: "", gaps: [] })
      const { sparql } = compileQuery(vocabulary, corrected)
      expect(Array.isArray(store.query(sparql))).toBe(true)
    }), { numRuns: 60 })
    expect(store.size).toBe(size)
  })
})

describe("settings from the environment", () => {
  it("defaults: temperature 0, 3 steps; the knobs are read", () => {
    const d = settingsFromEnv({ AI_PROVIDER: "ollama", AI_MODEL: "qwen2.5:7b" })
    expect([d.temperature, d.maxSteps]).toEqual([0, 3])
    const s = settingsFromEnv({ AI_PROVIDER: "anthropic", AI_MODEL: "claude-x", ANTHROPIC_API_KEY: "k", LLM_TEMPERATURE: "0.5", LLM_MAX_AGENT_STEPS: "5", LLM_THINKING_BUDGET: "2048" })
    expect([s.temperature, s.maxSteps, s.label]).toEqual([0.5, 5, "anthropic claude-x"])
    expect(() => settingsFromEnv({ AI_PROVIDER: "anthropic", AI_MODEL: "m", ANTHROPIC_API_KEY: "k", LLM_THINKING_BUDGET: "10" })).toThrow(/LLM_THINKING_BUDGET/)
  })

  it("LLM_THINKING_BUDGET=0, seed 000's default, means no thinking block (not a budget below Anthropic's 1024)", async () => {
    const s = settingsFromEnv({ AI_PROVIDER: "anthropic", AI_MODEL: "claude-x", ANTHROPIC_API_KEY: "k", LLM_THINKING_BUDGET: "0" })
    expect(s.label).toBe("anthropic claude-x")
    // The request it sends: no thinking, the temperature kept, submit_slots still forced.
    let body: Record<string, unknown> | undefined
    const server = createServer(async (req, res) => {
      let text = ""
      for await (const chunk of req) text += chunk
      body = JSON.parse(text)
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "stop here" } }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as AddressInfo
      const settings = settingsFromEnv({ AI_PROVIDER: "anthropic", AI_MODEL: "claude-x", ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`, LLM_THINKING_BUDGET: "0" })
      await expect(searchAgent(catalogue, { client: settings.client, maxSteps: 1 }).run("maps")).rejects.toMatchObject({ _tag: "ModelError" })
      expect(body).toMatchObject({ temperature: 0, tool_choice: { type: "tool", name: SUBMIT_SLOTS } })
      expect(body).not.toHaveProperty("thinking")
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe("malformed submissions", () => {
  const valid = { slots: { domains: ["hdmap"], filters: { country: "de" }, ranges: {} }, interpretation: "maps in Germany", gaps: [] }

  it("a submission that does not decode is reported back, and the corrected one is used", async () => {
    const answers = [
      toolCalls([{ name: SUBMIT_SLOTS, arguments: { slots: { domains: "hdmap", filters: [], ranges: { laneCount: { min: "many" } } }, interpretation: 3 } }]),
      toolCalls([{ name: SUBMIT_SLOTS, arguments: valid }])
    ]
    const client = recordingModel(ModelClient.fromFunction(() => answers.shift()!))
    const result = await search(catalogue, client, "maps in Germany")
    expect(client.requests).toHaveLength(2)
    const feedback = client.requests[1]!.messages.at(-1)!
    expect(feedback.role === "tool" && feedback.name).toBe(SUBMIT_SLOTS)
    expect(result.slots.filters).toEqual({ country: ["DE"] })
  })

  it("a model that never submits valid slots ends in OutputInvalid within LLM_MAX_AGENT_STEPS", async () => {
    const client = recordingModel(ModelClient.fromFunction(() => toolCalls([{ name: SUBMIT_SLOTS, arguments: "{not json" }])))
    await expect(search(catalogue, client, "maps", { maxSteps: 3 })).rejects.toMatchObject({ _tag: "OutputInvalid" })
    expect(client.requests).toHaveLength(3)
  })
})
