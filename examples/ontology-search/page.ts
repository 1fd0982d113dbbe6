/**
 * The search page: one HTML file, no build. It opens an EventSource on /search, lists the run's
 * progress, then shows the interpretation, the corrections made, the gaps (with suggestions), the
 * confidence, the SPARQL and the hits. Text is inserted with textContent only.
 */
export const searchPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ontology search</title><link rel="icon" href="data:,">
<style>body{font:15px system-ui;margin:2rem auto;max-width:60rem}input{width:70%;font-size:1rem}
pre{background:#f4f4f4;padding:.5rem;overflow:auto}li.gap{color:#a40}li.fix{color:#05a}.muted{color:#777}</style></head>
<body><h1>Ontology search</h1>
<form id="f"><input id="q" value="rainy night scenarios on a motoway in Germany"> <button>Search</button></form>
<ol id="progress" class="muted"></ol>
<h2>Interpretation</h2><p id="interpretation"></p><p>Confidence: <b id="confidence"></b></p>
<h2>Corrections</h2><ul id="corrections"></ul>
<h2>Gaps</h2><ul id="gaps"></ul>
<h2>Results <span id="total" class="muted"></span></h2><ul id="hits"></ul>
<details><summary>SPARQL</summary><pre id="sparql"></pre></details>
<script>
const $ = (id) => document.getElementById(id)
const item = (list, text, cls) => { const li = document.createElement("li"); li.textContent = text; if (cls) li.className = cls; $(list).append(li) }
let source
$("f").onsubmit = (e) => {
  e.preventDefault()
  source?.close()
  for (const id of ["progress", "corrections", "gaps", "hits"]) $(id).replaceChildren()
  for (const id of ["interpretation", "confidence", "total", "sparql"]) $(id).textContent = ""
  source = new EventSource("/search?q=" + encodeURIComponent($("q").value))
  for (const tag of ["RunStart", "ModelResponse", "ToolUse", "ToolError", "RunEnd"]) source.addEventListener(tag, (m) => {
    const e = JSON.parse(m.data)
    item("progress", tag + (e.tool ? " " + e.tool : "") + (tag === "RunEnd" ? " (" + e.outcome._tag + ", " + e.durationMs + " ms)" : ""))
  })
  source.addEventListener("SearchResult", (m) => {
    const r = JSON.parse(m.data)
    $("interpretation").textContent = r.slots.interpretation
    $("confidence").textContent = r.slots.confidence
    for (const c of r.slots.corrections) item("corrections", c.slot + ": " + c.from + " → " + c.to + " (" + c.match + ")", "fix")
    for (const g of r.slots.gaps) item("gaps", g.term + ": " + g.reason + (g.suggestions ? " (did you mean " + g.suggestions.join(", ") + "?)" : ""), "gap")
    $("total").textContent = r.total + " assets"
    for (const h of r.hits) item("hits", h.domain + "  " + h.asset)
    $("sparql").textContent = r.sparql
    source.close()
  })
  source.addEventListener("error", (m) => { if (m.data) item("progress", "error: " + JSON.parse(m.data).message, "gap"); source.close() })
}
</script></body></html>
`
