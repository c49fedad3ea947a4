// The problem page: draft autosave, Run (samples) and Submit (all cases), live status.
"use strict";
(() => {
  const page = document.querySelector("article.problem");
  if (!page) return;
  const slug = page.dataset.slug;
  const draftKey = `jaxjudge:draft:${page.dataset.user}:${slug}`;
  const editor = document.getElementById("code");
  const starter = editor.defaultValue;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const panel = document.getElementById("verdict");

  // Drafts live in localStorage, which a browser may refuse to a page inside an LMS's
  // frame (third-party storage): then there are no drafts, and everything else works.
  const drafts = (() => {
    try {
      return window.localStorage;
    } catch {
      return null;
    }
  })();
  const saved = drafts ? drafts.getItem(draftKey) : null;
  if (saved !== null) editor.value = saved;
  editor.addEventListener("input", () => drafts && drafts.setItem(draftKey, editor.value));
  // CodeMirror (editor.js) takes over the textarea and keeps it up to date;
  // without it the plain textarea still works.
  if (window.jaxjudgeEditor) window.jaxjudgeEditor.mount(editor);
  document.getElementById("reset").addEventListener("click", () => {
    if (!confirm("Replace your code with the starter?")) return;
    editor.value = starter;
    editor.dispatchEvent(new Event("jaxjudge:replaced"));
    if (drafts) drafts.removeItem(draftKey);
  });

  const text = (tag, content, className) => {
    const node = document.createElement(tag);
    node.textContent = content;
    if (className) node.className = className;
    if (tag === "pre") node.tabIndex = 0;  // a long line scrolls: the keyboard can reach it
    return node;
  };
  const number = (value) => (value === null || value === undefined ? "" : Number(value).toPrecision(3));

  // While the server grades: the stage in words (announced when it changes) and the
  // seconds since sending (not announced: a screen reader would read every tick).
  function stageOf(state, mode) {
    if (state.status === "queued") return state.position ? `Queued: ${ordinal(state.position)} in line` : "Queued";
    if (state.stage === "hidden") return "The samples are in; the hidden cases are running";
    return mode === "run" ? "Running the samples" : "Grading: the samples first, then the hidden cases";
  }
  function ordinal(n) {
    const suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
    return `${n}${suffix}`;
  }
  function showProgress(state, mode, started) {
    const words = stageOf(state, mode);
    let line = panel.querySelector("p.progress-line");
    if (!line || line.dataset.stage !== words) {
      line = document.createElement("p");
      line.className = "pending progress-line";
      line.dataset.stage = words;
      const stage = text("span", words);
      const clock = text("span", "", "elapsed");
      clock.setAttribute("aria-hidden", "true");
      line.append(stage, clock);
      panel.replaceChildren(line);
      if (state.samples && state.samples.length) panel.append(casesWithDetails(state.samples));
    }
    line.querySelector(".elapsed").textContent = ` · ${((Date.now() - started) / 1000).toFixed(1)} s`;
  }
  // The problem's status line follows the submits without a reload (app/data/progress.py).
  // The words compared in this file are the server's, spelled as their values: a
  // ProgressStatus ("solved", "attempted") and a SubmissionStatus ("queued", "done") of
  // app/vocabulary.py, and a Verdict ("accepted") of grader/child/verdicts.py.
  function setStatus(status) {
    const shown = document.querySelector(".meta .status");
    if (!shown || shown.textContent === "solved") return;
    shown.textContent = status;
    shown.className = `status ${status}`;
  }

  // A table wider than a phone scrolls inside its own box, never the page.
  function scrolling(table, label) {
    const box = document.createElement("div");
    box.className = "scroll-x";
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", label);
    box.append(table);
    return box;
  }
  function casesWithDetails(cases) {
    const found = document.createDocumentFragment();
    found.append(scrolling(casesTable(cases), "Cases"));
    if (window.jaxjudgeFailureDetails) found.append(window.jaxjudgeFailureDetails(cases));
    return found;
  }

  function casesTable(cases) {
    const table = document.createElement("table");
    table.className = "cases";
    const head = table.createTHead().insertRow();
    for (const title of ["Case", "Kind", "Verdict", "Max abs error", "Time (s)", "Details"]) {
      const cell = text("th", title);
      cell.scope = "col";
      head.append(cell);
    }
    const body = table.createTBody();
    for (const c of cases) {
      const row = document.createElement("tr");
      // The values themselves are below the table, one block per output (failure-details.js).
      const details = text("td", c.message || "", "case-message");
      if (!c.hidden && c.expected && c.actual && c.verdict === "wrong_answer") {
        const link = document.createElement("a");
        link.href = `#failure-${c.name}`;
        link.textContent = "the values, below";
        details.append(document.createElement("br"), link);
      }
      row.append(text("td", c.name), text("td", c.hidden ? "hidden" : c.probe ? "memory probe" : "sample"), text("td", c.verdict_label, `verdict ${c.verdict}`),
                 text("td", number(c.max_abs_error)), text("td", number(c.seconds)), details);
      body.append(row);
    }
    return table;
  }

  // Author tests (tests.py): a hidden one reads "hidden test N" and passed or failed only.
  function testsTable(tests) {
    const table = document.createElement("table");
    table.className = "cases";
    const head = table.createTHead().insertRow();
    for (const title of ["Test", "Points", "Result", "Details"]) {
      const cell = text("th", title);
      cell.scope = "col";
      head.append(cell);
    }
    const body = table.createTBody();
    for (const t of tests) {
      const row = document.createElement("tr");
      row.append(text("td", t.name), text("td", String(t.points)),
                 text("td", t.passed ? "passed" : "failed", `verdict ${t.passed ? "accepted" : "wrong_answer"}`), text("td", t.message || ""));
      body.append(row);
    }
    return table;
  }

  // A problem with several parts: each part's verdict and cases passed (grader/judging/credit.py).
  function partsTable(parts) {
    const table = document.createElement("table");
    table.className = "cases parts";
    const head = table.createTHead().insertRow();
    for (const title of ["Part", "Function", "Weight", "Verdict", "Cases passed", "Details"]) {
      const cell = text("th", title);
      cell.scope = "col";
      head.append(cell);
    }
    const body = table.createTBody();
    for (const p of parts) {
      const row = document.createElement("tr");
      row.append(text("td", p.name), text("td", p.entry_point), text("td", String(p.weight)),
                 text("td", p.verdict_label, `verdict ${p.verdict}`), text("td", `${p.passed} of ${p.total}`),
                 text("td", p.diagnosis ? `Likely mistake: ${p.diagnosis}` : p.message || ""));
      body.append(row);
    }
    return table;
  }

  function show(state) {
    panel.replaceChildren();
    const timing = state.seconds === null || state.seconds === undefined ? "" : ` · ${state.seconds}s`;  // not after hidden cases
    panel.append(text("h3", `${state.verdict_label} · score ${Math.round(state.score * 100)}%${timing}`, `verdict ${state.verdict}`));
    if (state.diagnosis) panel.append(text("p", `Likely mistake: ${state.diagnosis}`, "diagnosis"));
    if (state.message) panel.append(text("pre", state.message));
    if (state.parts && state.parts.length > 1) panel.append(scrolling(partsTable(state.parts), "Parts"));
    if (state.cases.length) panel.append(casesWithDetails(state.cases));
    if (state.tests && state.tests.length) panel.append(scrolling(testsTable(state.tests), "Tests"));
    if (state.stdout) panel.append(text("h4", "Your output"), text("pre", state.stdout));
    if (state.hidden_output_withheld) panel.append(text("p", "Hidden cases show only their verdict; output printed while they ran is not shown. Use Run to debug on the samples.", "meta"));
  }

  async function refresh(id, path) {
    const answer = await fetch(path);
    if (answer.ok) document.getElementById(id).innerHTML = await answer.text();  // server-rendered, escaped HTML
  }

  document.getElementById("reveal-hint").addEventListener("click", async (event) => {
    const answer = await fetch(`/api/problems/${slug}/hints`, { method: "POST", headers: { "X-CSRF-Token": csrf } });
    if (!answer.ok) return;
    const body = await answer.json();
    const list = document.getElementById("hint-list");
    list.replaceChildren();
    body.hints.forEach((html, index) => {
      const hint = document.createElement("div");
      hint.className = "hint";
      hint.innerHTML = `<strong>Hint ${index + 1}</strong>${html}`;  // sanitised by the server (nh3)
      list.append(hint);
    });
    document.getElementById("hint-progress").textContent = `${body.revealed}/${body.count}`;
    event.target.closest("button").disabled = body.revealed >= body.count;
  });

  // A notebook (.ipynb) goes as a file: the server takes the entry point's code from
  // its cells (app/grading/notebooks.py) and says what it left out.
  function send(mode, notebook) {
    if (notebook) {
      const form = new FormData();
      form.append("problem", slug);
      form.append("mode", mode);
      form.append("notebook", notebook);
      return fetch("/api/submissions/notebook", { method: "POST", headers: { "X-CSRF-Token": csrf }, body: form });
    }
    return fetch("/api/submissions", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ problem: slug, code: editor.value, mode }),
    });
  }
  function notebookNotes(body) {
    const box = document.createElement("details");
    box.className = "notebook-notes";
    box.open = body.notes.length > 0;
    const left = body.notes.length ? `; ${body.notes.length} thing${body.notes.length === 1 ? "" : "s"} left out` : "";
    box.append(text("summary", `From your notebook: cells ${body.cells.join(", ")}${left}`));
    const list = document.createElement("ul");
    for (const note of body.notes) list.append(text("li", note));
    if (body.missing.length) list.append(text("li", `Not defined in the notebook: ${body.missing.join(", ")}`));
    box.append(list);
    return box;
  }

  async function grade(mode, notebook) {
    panel.replaceChildren(text("p", "Sending…", "pending"));
    const created = await send(mode, notebook);
    const body = await created.json();
    if (!created.ok) {
      panel.replaceChildren(text("p", typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail), "error"));
      return;
    }
    const started = Date.now();
    if (mode === "submit") {
      setStatus("attempted");
      refresh("history", `/problems/${slug}/history`);  // the new submit, queued, in the list
    }
    const ticking = setInterval(() => {
      const clock = panel.querySelector(".progress-line .elapsed");
      if (clock) clock.textContent = ` · ${((Date.now() - started) / 1000).toFixed(1)} s`;
    }, 100);
    const state = (await streamed(body.id, mode, started)) || (await polled(body.id, mode, started));
    clearInterval(ticking);
    show(state);
    if (notebook) panel.append(notebookNotes(body));
    if (mode === "submit") {
      if (state.verdict === "accepted") setStatus("solved");
      refresh("track-progress", `/problems/${slug}/track-progress`);
      await refresh("history", `/problems/${slug}/history`);
      if (state.verdict === "accepted") await refresh("walkthrough", `/problems/${slug}/walkthrough`);
    }
  }
  // The server pushes each change (Server-Sent Events); null: the stream failed, was
  // refused (a busy server) or ran out, and polling takes over.
  function streamed(id, mode, started) {
    return new Promise((resolve) => {
      if (!window.EventSource) return resolve(null);
      const source = new EventSource(`/api/submissions/${id}/events`);
      const stop = (value) => { source.close(); resolve(value); };
      source.addEventListener("progress", (event) => showProgress(JSON.parse(event.data), mode, started));
      source.addEventListener("done", (event) => stop(JSON.parse(event.data)));
      source.addEventListener("again", () => stop(null));
      source.onerror = () => stop(null);
    });
  }
  async function polled(id, mode, started) {
    for (;;) {
      const state = await (await fetch(`/api/submissions/${id}`)).json();
      if (state.status === "done") return state;
      showProgress(state, mode, started);
      // Most verdicts take about a second: look often at first, then less (pollDelay).
      await new Promise((resolve) => setTimeout(resolve, pollDelay(Date.now() - started)));
    }
  }
  function pollDelay(waited) {
    return waited < 3000 ? 100 : waited < 15000 ? 300 : 1000;  // ms; app/commands/client.py polls alike
  }
  document.getElementById("run").addEventListener("click", () => grade("run"));
  document.getElementById("submit").addEventListener("click", () => grade("submit"));
  const upload = document.getElementById("notebook");
  upload.addEventListener("change", () => {
    if (upload.files.length) grade("submit", upload.files[0]).finally(() => { upload.value = ""; });
  });
})();
