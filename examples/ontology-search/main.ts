/**
 * The ontology search, from the command line.
 *
 * Run: npm run example:search                     offline, on a scripted stand-in model
 *      npm run example:search -- "rainy night scenarios in Germany"
 *      AI_PROVIDER=openai AI_MODEL=gpt-4o-mini OPENAI_API_KEY=... npm run example:search -- "..."
 */
import { search, settingsFromEnv } from "./search-agent.ts"
import { standInModel } from "./stand-in-model.ts"
import { loadCatalogue } from "./store.ts"

const started = Date.now()
const catalogue = loadCatalogue()
console.log(`catalogue: ${catalogue.assets} assets, ${catalogue.vocabulary.domains.size} domains (${Date.now() - started} ms)`)
// Set but empty (`AI_PROVIDER= npm run ...`, an emptied line of a .env file) is unset: the stand-in answers.
const live = (process.env.AI_PROVIDER ?? "").trim() !== ""
const settings = live ? settingsFromEnv() : { client: standInModel(), label: "scripted stand-in (no LLM; set AI_PROVIDER to use one)", maxSteps: 3 }
console.log(`model: ${settings.label}`)

const questions = process.argv.slice(2).length > 0 ? process.argv.slice(2) : [
  "motorway maps in Germany with at least 3 lanes",
  "rainy night scenarios on a highway",
  "LiDAR recordings in Japan longer than 600 s"
]
for (const question of questions) {
  try {
    const result = await search(catalogue, settings.client, question, { maxSteps: settings.maxSteps, limit: 3 })
    console.log(`\n? ${question}`)
    console.log(`  interpretation: ${result.slots.interpretation}`)
    console.log(`  domains: ${result.slots.domains.join(", ")}  confidence: ${result.slots.confidence}`)
    for (const [key, { min, max }] of Object.entries(result.slots.ranges)) console.log(`  range ${key}: ${min ?? "-∞"} … ${max ?? "∞"}`)
    for (const c of result.slots.corrections) console.log(`  corrected ${c.slot}: ${c.from} → ${c.to} (${c.match})`)
    for (const g of result.slots.gaps) console.log(`  gap: ${g.term}: ${g.reason}${g.suggestions === undefined ? "" : ` (did you mean ${g.suggestions.join(", ")}?)`}`)
    console.log(`  ${result.total} assets; first: ${result.hits.map((h) => h.asset).join(", ")}`)
  } catch (error) {
    console.error(`failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
