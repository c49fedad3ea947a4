// A failed sample's values as a person reads them (the problem page, problem.js): one
// block per output with its name, the largest difference and its ratio to the tolerance,
// the values rounded to the digits the tolerance resolves, aligned in a table with the
// first element outside the tolerance marked, and the full values one click away.
// The tolerances come with the case (grader/judging/report.py ComparedOutput); a report
// stored before they did falls back to the output's position and the server's message.
"use strict";
(() => {
  const SHOWN_AROUND = 2;  // rows shown before and after the first difference
  const SHOWN_FIRST = 4;  // rows shown from the start

  const el = (tag, content, className) => {
    const node = document.createElement(tag);
    if (content !== undefined && content !== null) node.textContent = content;
    if (className) node.className = className;
    return node;
  };

  // Significant digits that tell apart what the tolerance tells apart: rtol 1e-5, 6 digits.
  function digitsFor(tolerance) {
    if (!tolerance || !(tolerance.rtol > 0)) return 6;
    return Math.min(9, Math.max(3, Math.ceil(-Math.log10(tolerance.rtol)) + 1));
  }
  function rounded(value, digits) {
    if (typeof value !== "number") return String(value);  // "nan", "inf", a description
    if (value === 0 || !Number.isFinite(value)) return String(value);
    const size = Math.abs(value);
    if (size >= 1e-4 && size < 1e7) {
      // Trailing zeros kept, so a column's values line up digit for digit (1.6380 over
      // 1.4378); toPrecision's exponent form for large values written out (1.21e+3: 1210).
      const text = value.toPrecision(digits);
      return text.includes("e") ? String(Number(text)) : text;
    }
    return value.toExponential(digits - 1).replace(/\.?0+e/, "e");
  }
  const numeric = (value) => (typeof value === "number" ? value : Number(value));  // "nan" -> NaN

  // Nested lists to [index, value] pairs in row-major order, and the shape.
  function flattened(values) {
    const pairs = [];
    const walk = (item, index) => {
      if (Array.isArray(item)) item.forEach((inner, i) => walk(inner, [...index, i]));
      else pairs.push([index, item]);
    };
    walk(values, []);
    const shape = [];
    for (let level = values; Array.isArray(level); level = level[0]) shape.push(level.length);
    return { pairs, shape };
  }
  const named = (index) => (index.length ? `(${index.join(", ")}${index.length === 1 ? "," : ""})` : "()");

  // How far each element is, in tolerances: |got - expected| / (atol + rtol |expected|).
  function ratioOf(got, want, tolerance) {
    const g = numeric(got), w = numeric(want);
    if (Number.isNaN(g) || Number.isNaN(w)) return Number.isNaN(g) && Number.isNaN(w) ? 0 : Infinity;
    if (!Number.isFinite(g) || !Number.isFinite(w)) return g === w ? 0 : Infinity;
    const gap = Math.abs(g - w);
    if (!tolerance) return gap;  // a report stored without its tolerances: the difference
    const allowed = tolerance.atol + tolerance.rtol * Math.abs(w);
    return allowed > 0 ? gap / allowed : gap > 0 ? Infinity : 0;
  }

  function rowsToShow(count, first) {
    const keep = new Set();
    for (let i = 0; i < Math.min(count, SHOWN_FIRST); i++) keep.add(i);
    if (first >= 0) for (let i = first - SHOWN_AROUND; i <= first + SHOWN_AROUND; i++) if (i >= 0 && i < count) keep.add(i);
    return [...keep].sort((a, b) => a - b);
  }

  // want, have: the expected and got values, flattened (same shape).
  function valuesTable(want, have, tolerance, label) {
    const digits = digitsFor(tolerance);
    const ratios = want.pairs.map(([, w], i) => ratioOf(have.pairs[i][1], w, tolerance));
    const first = ratios.findIndex((r) => r > (tolerance ? 1 : 0));
    let worst = 0;
    ratios.forEach((r, i) => { if (r > ratios[worst]) worst = i; });
    const table = el("table", null, "values");
    table.append(el("caption", label, "visually-hidden"));
    const head = table.createTHead().insertRow();
    for (const title of ["index", "expected", "got", "difference", "× tolerance"]) {
      const cell = el("th", title);
      cell.scope = "col";
      head.append(cell);
    }
    const body = table.createTBody();
    let previous = -1;
    for (const i of rowsToShow(want.pairs.length, first)) {
      if (i > previous + 1) {
        const gap = body.insertRow();
        const cell = el("td", `… ${i - previous - 1} more`, "gap");
        cell.colSpan = 5;
        gap.append(cell);
      }
      previous = i;
      const [index, w] = want.pairs[i];
      const g = have.pairs[i][1];
      const difference = numeric(g) - numeric(w);
      const row = body.insertRow();
      if (i === first) {
        row.className = "first-difference";
        row.title = "the first element outside the tolerance";
      }
      row.append(el("th", named(index)), el("td", rounded(w, digits)), el("td", rounded(g, digits)),
                 el("td", Number.isNaN(difference) ? "" : rounded(difference, 3)),
                 el("td", !tolerance ? "" : Number.isFinite(ratios[i]) ? rounded(ratios[i], 3) : "∞"));
      row.firstChild.scope = "row";
      if (i === first) row.firstChild.append(el("span", " ◀ first outside", "marker"));
    }
    if (want.pairs.length > previous + 1) {
      const cell = el("td", `… ${want.pairs.length - previous - 1} more`, "gap");
      cell.colSpan = 5;
      body.insertRow().append(cell);
    }
    return { table, first, worst: want.pairs.length ? worst : -1, ratios, want, digits };
  }

  function summaryOf(name, result, tolerance) {
    const { worst, ratios, want, digits, first } = result;
    if (worst < 0) return `${name}: no values`;
    const ratio = ratios[worst];
    const allowed = tolerance ? ` (rtol ${tolerance.rtol}, atol ${tolerance.atol})` : "";
    const at = named(want.pairs[worst][0]);
    if (!tolerance) return `${name}: largest difference ${rounded(ratio, 3)} at ${at}`;
    if (first < 0) return `${name}: within the tolerance${allowed}, at most ${rounded(ratio, 2)}× of it`;
    const times = Number.isFinite(ratio) ? `${rounded(ratio, 3)}×` : "infinitely far past";
    return `${name}: ${times} the tolerance${allowed} at ${at}; ${ratios.filter((r) => r > 1).length} of ${ratios.length} elements outside (values shown to ${digits} significant digits)`;
  }

  function fullValues(expected, got) {
    const box = el("details", null, "full-values");
    box.append(el("summary", "Full values"));
    const full = `expected: ${JSON.stringify(expected)}\ngot:      ${JSON.stringify(got)}`;
    const pre = el("pre", full);
    pre.tabIndex = 0;
    const copy = el("button", "Copy", "link");
    copy.type = "button";
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(full);
        copy.textContent = "Copied";
      } catch {  // no clipboard (a page over plain HTTP): select the text to copy by hand
        window.getSelection().selectAllChildren(pre);
        copy.textContent = "Selected: press Ctrl+C";
      }
    });
    box.append(copy, pre);
    return box;
  }

  // One output (or one leaf of a tree output): its block.
  function outputBlock(name, expected, got, tolerance) {
    const block = el("section", null, "output-detail");
    const described = typeof expected === "string" || typeof got === "string";
    const want = described ? null : flattened(expected), have = described ? null : flattened(got);
    if (described || JSON.stringify(want.shape) !== JSON.stringify(have.shape)) {
      const why = typeof got === "string" ? got : typeof expected === "string" ? expected
        : `expected shape ${named(want.shape)}, got ${named(have.shape)}`;
      block.append(el("h5", `${name}: ${why}`));
    } else {
      const result = valuesTable(want, have, tolerance, `${name}: expected and got`);
      block.append(el("h5", summaryOf(name, result, tolerance)));
      const scroll = el("div", null, "scroll-x");
      scroll.tabIndex = 0;
      scroll.setAttribute("role", "region");
      scroll.setAttribute("aria-label", `${name}: values`);
      scroll.append(result.table);
      block.append(scroll);
    }
    block.append(fullValues(expected, got));
    return block;
  }

  const isTree = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

  // Every failed sample that carries its values, each output a block.
  window.jaxjudgeFailureDetails = (cases) => {
    const shown = cases.filter((c) => !c.hidden && c.verdict === "wrong_answer" && c.expected && c.actual);
    const found = document.createDocumentFragment();
    for (const c of shown) {
      const section = el("section", null, "failure");
      section.id = `failure-${c.name}`;
      section.append(el("h4", `Sample ${c.name}: what differs`));
      c.expected.forEach((want, i) => {
        const compared = c.compared && c.compared[i];
        const name = compared ? compared.name : `output ${i + 1}`;
        const got = c.actual[i];
        if (isTree(want) && isTree(got)) {
          for (const path of Object.keys(want)) if (path in got) section.append(outputBlock(`${name}/${path}`, want[path], got[path], compared));
        } else {
          section.append(outputBlock(name, want, got, compared));
        }
      });
      found.append(section);
    }
    return found;
  };
})();
