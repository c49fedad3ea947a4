// The course problem editor (templates/course_problem_editor.html): statement.md's live
// preview, rendered by the server as learners will see it, and the check's progress
// (queued for a grading worker, then running).
const csrf = document.querySelector('meta[name="csrf-token"]').content;

document.querySelectorAll("textarea[data-preview-target]").forEach((area) => {
  const target = document.getElementById(area.dataset.previewTarget);
  let timer = null;
  let asked = 0;
  area.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const mine = ++asked;
      const body = new FormData();
      body.append("csrf_token", csrf);
      body.append("text", area.value);
      const answer = await fetch(target.dataset.previewUrl, { method: "POST", body });
      if (answer.ok && mine === asked) target.innerHTML = await answer.text();
    }, 400);
  });
});

// Queued (waiting for a grading worker) and running are neither finished nor failed:
// keep polling through both; a finished check reloads the page.
const check = document.getElementById("check");
const unfinished = ["queued", "running"];
if (check && unfinished.includes(check.dataset.status)) {
  const log = document.getElementById("check-log");
  const shown = document.getElementById("check-status");
  const waiting = document.getElementById("check-waiting");
  const poll = async () => {
    const answer = await fetch(check.dataset.progress, { cache: "no-store" });
    if (!answer.ok) return;
    const state = await answer.json();
    log.textContent = state.lines.join("\n");
    shown.textContent = state.status;
    shown.className = `check ${state.status}`;
    if (waiting && state.status !== "queued") waiting.hidden = true; // a worker took it
    if (unfinished.includes(state.status)) setTimeout(poll, 1000);
    else window.location.reload(); // the result, the errors and the publish button
  };
  setTimeout(poll, 1000);
}
