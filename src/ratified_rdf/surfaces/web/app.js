// The question page: asks /api/ask and renders the answer card. Every piece of data goes into
// the page as text (textContent, append of strings), never as HTML, and a link is made only
// from an http(s) URL, so nothing an answer carries can run in the page.
"use strict";

(() => {
  const ID = "https://w3id.org/ratified-rdf/id/";
  const SHOWN = 25; // results listed before the rest fold away
  const HEADINGS = {
    answered: "Answer",
    unknown: "The graph doesn't know",
    ambiguous: "Ambiguous",
  };

  const form = document.getElementById("ask");
  const input = document.getElementById("q");
  const status = document.getElementById("status");
  const out = document.getElementById("answer");

  function el(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) {
      if (child !== null && child !== undefined && child !== "") node.append(child);
    }
    return node;
  }

  function safeUrl(url) {
    if (!url) return null;
    try {
      const parsed = new URL(url, window.location.href);
      return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
    } catch {
      return null;
    }
  }

  function link(url, text) {
    const href = safeUrl(url);
    if (!href) return document.createTextNode(text);
    const a = el("a", null, text);
    a.href = href;
    if (new URL(href).origin !== window.location.origin) a.rel = "noopener noreferrer";
    return a;
  }

  // A brain IRI opens on this server (/id/…), which describes it.
  function graphLink(iri) {
    if (!iri || !iri.startsWith(ID)) return null;
    const a = link("/id/" + iri.slice(ID.length), "in the graph");
    a.className = "graph-link";
    return a;
  }

  // "1 post", "2 posts", "1 person", "2 people": a count with its noun in the right number.
  const plural = (n, noun, nouns) => `${Number(n).toLocaleString("en")} ${n === 1 ? noun : nouns ?? `${noun}s`}`;
  const pct = (x) => (x === null || x === undefined ? "" : `${(x * 100).toFixed(1)}%`);
  const day = (text) => (text ? String(text).slice(0, 10) : "?");
  // A kramdown cross-reference ({{early-data-indication}}) reads as the section it resolved
  // to, named by its anchor, as the command line's card shows it (wording.cited_words).
  const citedWords = (post) => {
    const text = String(post.cited_text).split(/\s+/).filter(Boolean).join(" ");
    const xref = /^\{\{\s*[?!]?\s*([A-Za-z][\w.-]*)\s*\}\}$/.exec(text);
    if (!xref) return `“${text.replace(/\{\{\s*[?!]?\s*([A-Za-z][\w.-]*)\s*\}\}/g, "$1")}”`;
    const where = post.section_number ? `§${post.section_number}` : "the section";
    return `${where} (by its anchor ${xref[1]})`;
  };

  // A section's stored text (kramdown-rfc as its source wrote it) as plain words: the %%%
  // extraction markers and {: …} attribute lists dropped, {{…}} references named. The
  // section's own page (/id/…) shows it fully rendered.
  function readable(text) {
    const reference = (_, target) => {
      const name = target.trim().replace(/^[?!]/, "");
      const rfc = /^RFC ?(\d{1,5})$/i.exec(name);
      return rfc ? `RFC ${Number(rfc[1])}` : name;
    };
    return String(text)
      .split("\n")
      .filter((line) => !/^ {0,3}%%%/.test(line) && !/^ {0,3}\{:[^{}]*\}\s*$/.test(line))
      .join("\n")
      .replace(/\{:[^{}\n]*\}/g, "")
      .replace(/\{\{([^{}\n]{1,200})\}\}/g, reference)
      .replace(/^ {0,3}: /gm, "  ") // a definition, indented under its term
      .replace(/\n{3,}/g, "\n\n")
      .trim();
  }

  // One result as [text, public url, brain IRI, longer text].
  function describe(r) {
    switch (r.kind) {
      case "section_fate": {
        const became = r.final_section_number
          ? `${r.rfc} §${r.final_section_number} ${r.final_heading ?? ""}`
          : `no counterpart in ${r.rfc}`;
        const how = [r.rule, r.similarity !== null ? `${pct(r.similarity)} similar` : ""];
        return [`${r.revision} §${r.section_number} ${r.heading} → ${became} (${how.filter(Boolean).join(", ")})`];
      }
      case "history_entry":
        return [
          `${r.document} §${r.section_number ?? "–"} ${r.heading} (${pct(r.similarity)}, ${r.still_changing ? "still changing" : "final"})`,
          r.url,
        ];
      case "chain_step":
        return [r.label, r.url, r.iri];
      case "holding":
        return [`${r.what}: ${r.count}${r.names.length ? ` (${r.names.slice(0, 12).join(", ")})` : ""}`];
      case "revision":
        return [`${r.label}, ${day(r.date)}${r.became ? ` → ${r.became}` : ""}`, r.url];
      case "post":
        return [
          `${r.thread_number ? `#${r.thread_number} ` : ""}${r.thread_title} — ${r.author ?? "?"}, ${day(r.created)}, cites ${citedWords(r)} in ${r.document}${r.while_changing ? "" : " (after publication)"}`,
          r.post_url,
        ];
      case "commit":
        return [
          `${r.subject ?? "commit"} — ${r.author ?? "?"}, ${day(r.date)}${r.pull_request ? ` via PR #${r.pull_request}` : ""}`,
          r.commit_url,
          r.iri,
        ];
      case "person":
      {
        // What their entry rests on: posts, commits, or comments on a pull request.
        const parts = [];
        if (r.posts) parts.push(plural(r.posts, "post"));
        if (r.commits) parts.push(plural(r.commits, "commit"));
        if (r.pull_requests_discussed) {
          parts.push(`commented on ${plural(r.pull_requests_discussed, "pull request")} that changed it`);
        }
        return [`${r.name}: ${parts.join(", ") || `${plural(0, "post")}, ${plural(0, "commit")}`}`];
      }
      case "expert":
        return [`${r.name} (${r.role}) — ${r.reason}`, null, r.iri];
      case "thread":
        return [`#${r.number} ${r.title} (${r.state}${r.is_pull_request ? ", pull request" : ""})`, r.url];
      case "section_activity":
        return [`${r.section}: ${plural(r.posts, "post")}, ${plural(r.commits, "commit")}`, r.url];
      case "count":
        return [`${r.what}: ${r.count}`];
      case "section_text":
        return [`${r.document} §${r.section_number ?? "–"} ${r.heading}`, r.url, null, readable(r.text)];
      case "section_diff":
        return [
          `${r.older} → ${r.newer}: ${plural(r.added.length, "line")} added, ${plural(r.removed.length, "line")} removed`,
          r.newer_url ?? r.older_url,
          null,
          [...r.removed.map((line) => `- ${line}`), ...r.added.map((line) => `+ ${line}`)].join("\n"),
        ];
      case "document":
        return [`${r.name}${r.title ? `: ${r.title}` : ""}${r.published ? ` (published ${r.published})` : ""}`, r.url];
      default:
        return [JSON.stringify(r)];
    }
  }

  // The card's timeline, drawn by the server as SVG (what `ratified ask --plot` writes). It is
  // parsed as XML and rebuilt element by element from a short list of drawing elements and
  // attributes, with every link passed through safeUrl: no script, handler, style or
  // foreign content of any kind reaches the page, whatever the text says.
  const SVG_NS = "http://www.w3.org/2000/svg";
  const SVG_TAGS = new Set(["svg", "g", "a", "title", "desc", "rect", "line", "polyline", "path", "circle", "text"]);
  const SVG_ATTRS = new Set([
    "class", "id", "width", "height", "viewBox", "role", "aria-labelledby", "aria-describedby",
    "aria-hidden", "font-family", "font-size", "font-weight", "fill", "fill-opacity", "stroke",
    "stroke-width", "stroke-dasharray", "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "d",
    "points", "transform", "text-anchor", "data-kind", "data-date", "data-document",
  ]);

  function rebuilt(node) {
    if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.nodeValue);
    if (node.nodeType !== Node.ELEMENT_NODE || node.namespaceURI !== SVG_NS) return null;
    if (!SVG_TAGS.has(node.localName)) return null;
    const copy = document.createElementNS(SVG_NS, node.localName);
    for (const attr of node.attributes) {
      if (attr.name === "href") {
        const href = safeUrl(attr.value);
        if (href) {
          copy.setAttribute("href", href);
          copy.setAttribute("rel", "noopener noreferrer");
        }
      } else if (SVG_ATTRS.has(attr.name)) {
        copy.setAttribute(attr.name, attr.value);
      }
    }
    for (const child of node.childNodes) {
      const kept = rebuilt(child);
      if (kept) copy.append(kept);
    }
    return copy;
  }

  function timelineBlock(answer) {
    if (!answer.timeline || typeof answer.timeline_svg !== "string") return null;
    const parsed = new DOMParser().parseFromString(answer.timeline_svg, "image/svg+xml");
    if (parsed.getElementsByTagName("parsererror").length) return null;
    const svg = rebuilt(parsed.documentElement);
    if (!svg) return null;
    const caption = el("figcaption", "muted", [answer.timeline.description, ...answer.timeline.not_drawn].join(" "));
    return el(
      "section",
      "timeline-block",
      el("h3", null, "Its life at a glance"),
      el("figure", "timeline", el("div", "timeline-scroll", svg), caption),
    );
  }

  // The result's words are its link's text: a link never reads as a bare address.
  function resultItem(result) {
    const [text, url, iri, long] = describe(result);
    const item = el("li", `result result-${result.kind}`, url ? link(url, text) : text);
    const graph = graphLink(iri);
    if (graph) item.append(" · ", graph);
    if (long) item.append(el("pre", "said", long));
    return item;
  }

  // A list of the first SHOWN items, the rest folded under "N more".
  function foldedList(items, render) {
    const parts = [el("ul", null, ...items.slice(0, SHOWN).map(render))];
    if (items.length > SHOWN) {
      const rest = el("details", null, el("summary", null, `${items.length - SHOWN} more`));
      rest.append(el("ul", null, ...items.slice(SHOWN).map(render)));
      parts.push(rest);
    }
    return parts;
  }

  function resultsBlock(all) {
    const results = all.filter((r) => r.kind !== "drafted_question");
    if (!results.length) return null;
    const heading = el("h3", null, `Results (${results.length})`);
    return el("section", "results", heading, ...foldedList(results, resultItem));
  }

  function evidenceItem(e) {
    const item = el("li", "evidence", el("span", "role", e.role), " ");
    if (e.url) item.append(link(e.url, e.label));
    else item.append(e.label, " ", el("span", "muted", "(no public link)"));
    const graph = graphLink(e.iri);
    if (graph) item.append(" · ", graph);
    return item;
  }

  function evidenceBlock(evidence) {
    if (!evidence.length) return null;
    const heading = el("h3", null, `Evidence (${evidence.length}, every step a link)`);
    return el("section", "evidence-list", heading, ...foldedList(evidence, evidenceItem));
  }

  // The question a card drafts for the people it names: shown whole, never folded away.
  function draftedBlock(results) {
    const drafted = results.filter((r) => r.kind === "drafted_question");
    if (!drafted.length) return null;
    const block = el("section", "drafted-question", el("h3", null, "A question you could send"));
    for (const d of drafted) {
      block.append(
        el("p", "muted", `To ${d.to.join(", ")} (drafted for you; nothing is sent).`),
        el("pre", "drafted", d.text),
      );
    }
    return block;
  }

  function alternativesBlock(alternatives) {
    if (!alternatives.length) return null;
    const buttons = alternatives.map((alt) => {
      const button = el("button", "alternative", alt.question);
      button.type = "button";
      button.title = alt.reason;
      button.addEventListener("click", () => ask(alt.question));
      return el("li", null, button, " ", el("span", "muted", alt.reason));
    });
    return el("section", "alternatives", el("h3", null, "Did you mean"), el("ul", null, ...buttons));
  }

  function computedBlock(queries) {
    const details = el("details", "computed", el("summary", null, "Show how this was computed"));
    if (!queries.length) details.append(el("p", "muted", "No query ran."));
    for (const q of queries) {
      const params = Object.entries(q.params);
      const query = el(
        "section",
        "query",
        el("h4", null, `${q.name}.rq`),
        el("p", "muted", `${q.rows} row${q.rows === 1 ? "" : "s"} · ` + (q.reused
          ? `0 ms engine now: rows reused from its earlier run on the same graphs (which took ${q.engine_ms.toFixed(2)} ms engine)`
          : `${q.engine_ms.toFixed(2)} ms engine`)),
      );
      if (q.reproduces) {
        query.append(el("p", "muted", "Read from the card view; the full-path query ",
          link(`/queries/${encodeURIComponent(q.reproduces)}.rq`, `${q.reproduces}.rq`),
          ", with the same parameters, gives the same rows from the full graph."));
      }
      if (params.length) {
        const list = el("dl", "params");
        for (const [name, value] of params) list.append(el("dt", null, name), el("dd", null, value));
        query.append(list);
      } else {
        query.append(el("p", "muted", "No parameters."));
      }
      query.append(el("pre", "sparql", el("code", null, q.sparql.trim())));
      details.append(query);
    }
    return details;
  }

  // The card's trust state, worded as `ratified ask` words it.
  function trustLine(t) {
    const hash = `card hash ${String(t.content_hash).slice(0, 12)}…`;
    if (t.stale) {
      return `Trust: derived. STALE: ${t.reviewed_state ?? "derived"} by ${t.reviewer} on ${day(t.reviewed_at)}, but its evidence has changed since (${hash}).`;
    }
    if (!t.reviewer) return `Trust: derived (computed; no person has reviewed it; ${hash}).`;
    const note = t.note ? ` (“${t.note}”)` : "";
    return `Trust: ${t.state} by ${t.reviewer} on ${day(t.reviewed_at)}${note} (${hash}).`;
  }

  function renderAnswer(answer) {
    const card = el("article", `card verdict-${answer.verdict}`);
    card.dataset.verdict = answer.verdict;
    card.append(
      el("h2", null, HEADINGS[answer.verdict] ?? answer.verdict),
      el("p", "asked muted", `${answer.intent} · “${answer.question}”`),
      el("p", "summary", answer.summary),
    );
    if (answer.trust) {
      const state = answer.trust.stale ? "stale" : answer.trust.state;
      card.append(el("p", `trust trust-${state}`, trustLine(answer.trust)));
    }
    if (answer.withheld) card.append(el("p", "withheld", answer.withheld));
    for (const block of [
      timelineBlock(answer),
      resultsBlock(answer.results),
      draftedBlock(answer.results),
      alternativesBlock(answer.alternatives),
      evidenceBlock(answer.evidence),
    ]) {
      if (block) card.append(block);
    }
    if (answer.note) card.append(el("p", "note", el("strong", null, "Note: "), answer.note));
    card.append(computedBlock(answer.queries));
    out.replaceChildren(card);
  }

  function renderError(message) {
    out.replaceChildren(el("article", "card error", el("h2", null, "Could not ask"), el("p", null, message)));
  }

  async function ask(question) {
    const text = question.trim();
    if (!text) return;
    input.value = text;
    const url = new URL(window.location.href);
    url.searchParams.set("q", text);
    window.history.replaceState(null, "", url);
    status.textContent = "Asking…";
    try {
      const response = await fetch(`/api/ask?q=${encodeURIComponent(text)}&timeline=svg`, {
        headers: { Accept: "application/json" },
      });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) {
        renderError(body.error ?? `The server answered ${response.status}.`);
      } else {
        renderAnswer(body);
      }
    } catch (error) {
      renderError(`The server could not be reached (${error.message}).`);
    } finally {
      status.textContent = "";
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    ask(input.value);
  });
  for (const button of document.querySelectorAll("button.example")) {
    button.addEventListener("click", () => ask(button.dataset.question));
  }
  const first = new URL(window.location.href).searchParams.get("q");
  if (first) ask(first);
})();
