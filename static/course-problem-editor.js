// The course problem editor (templates/course_problem_editor.html): statement.md's live
// preview, rendered by the server as learners will see it, and the check's progress.
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

const check = document.getElementById("check");
if (check && check.dataset.status === "running") {
  const log = document.getElementById("check-log");
  const shown = document.getElementById("check-status");
  const poll = async () => {
    const answer = await fetch(check.dataset.progress, { cache: "no-store" });
    if (!answer.ok) return;
    const state = await answer.json();
    log.textContent = state.lines.join("\n");
    shown.textContent = state.status;
    shown.className = `check ${state.status}`;
    if (state.status === "running") setTimeout(poll, 1000);
    else window.location.reload(); // the result, the errors and the publish button
  };
  setTimeout(poll, 1000);
}
