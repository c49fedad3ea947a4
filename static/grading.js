// The grading view's keys and its rubric toggles without a page load
// (app/web/course_grading_view.py). Every form here also works without this script.
(() => {
  "use strict";
  const rubric = document.getElementById("rubric");
  let anchor = null; // the line a shift-click extends from

  function typing(target) {
    return target.closest("input, textarea, select, [contenteditable]") !== null;
  }

  function points(value) {
    return (Math.round(value * 100) / 100).toString();
  }

  function signed(value) {
    return (value >= 0 ? "+" : "") + points(value);
  }

  // The rubric as the server has it now: every item's points, who applied it.
  function redraw(state) {
    for (const item of state.items) {
      const row = rubric.querySelector(`li[data-item="${item.id}"]`);
      if (!row) continue;
      row.querySelector("button").setAttribute("aria-pressed", item.applied ? "true" : "false");
      row.querySelector('input[name="applied"]').value = item.applied ? "no" : "yes";
      row.querySelector(".item-points").textContent = signed(item.points);
      row.querySelector(".item-description").textContent = item.description;
      row.querySelector(".by").textContent = item.applied ? `applied by ${item.applied_by}` : "";
    }
    document.getElementById("manual-points").textContent = signed(state.manual_points);
    document.getElementById("combined-points").textContent =
      state.combined_points === null ? "–" : points(state.combined_points);
    document.getElementById("graded-by").textContent = state.graded_by || "not yet";
  }

  // Presses go out one after another, so the last answer drawn is the newest state.
  let queue = Promise.resolve();

  function send(form) {
    const body = new FormData(form);
    const wanted = form.querySelector('input[name="applied"]');
    if (wanted) {
      // Shown at once, so a second press sends the opposite; the answer redraws.
      const on = wanted.value === "yes";
      wanted.value = on ? "no" : "yes";
      form.querySelector("button").setAttribute("aria-pressed", on ? "true" : "false");
    }
    queue = queue.then(() => post(form.action, body)).catch(() => {
      document.getElementById("rubric-error").textContent =
        "Not saved (no answer from the server): reload the page to see the rubric as it is now.";
    });
  }

  async function post(action, body) {
    const answer = await fetch(action, {
      method: "POST",
      body,
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    if (!answer.ok) {
      // The item was removed meanwhile, or the session ended: say so, change nothing.
      document.getElementById("rubric-error").textContent =
        `Not saved (${answer.status}): reload the page to see the rubric as it is now.`;
      return;
    }
    redraw(await answer.json());
  }

  if (rubric) {
    rubric.addEventListener("submit", (event) => {
      const form = event.target;
      if (!form.matches("form.toggle, #mark-graded")) return;
      event.preventDefault();
      send(form);
    });
  }

  // Lines: click selects one, shift-click extends the selection to another.
  function select(first, last) {
    const [start, end] = first <= last ? [first, last] : [last, first];
    for (const row of document.querySelectorAll("table.code-view tr[data-line]")) {
      const line = Number(row.dataset.line);
      row.classList.toggle("selected", line >= start && line <= end);
    }
    document.getElementById("line-start").value = start;
    document.getElementById("line-end").value = end;
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.ln");
    if (!button) return;
    const line = Number(button.dataset.line);
    if (event.shiftKey && anchor !== null) {
      select(anchor, line);
    } else {
      anchor = line;
      select(line, line);
    }
  });

  async function follow(id) {
    const link = document.getElementById(id);
    if (!link) return;
    await queue; // what was pressed is saved before the page goes
    window.location.href = link.href;
  }

  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && typing(event.target)) {
      event.target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const key = event.key;
    if (key === "j" || key === "ArrowRight") {
      follow("next-learner");
    } else if (key === "k" || key === "ArrowLeft") {
      follow("previous-learner");
    } else if (/^[1-9]$/.test(key)) {
      const button = rubric && rubric.querySelector(`button[data-key="${key}"]`);
      if (!button) return;
      send(button.form);
    } else if (key === "c") {
      document.getElementById("comment-body").focus();
    } else if (key === "g") {
      send(document.getElementById("mark-graded"));
    } else if (key === "?") {
      const keys = document.getElementById("keys");
      keys.open = !keys.open;
    } else {
      return;
    }
    event.preventDefault();
  });
})();
