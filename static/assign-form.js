// The course page's assignment form: picking a problem that is assigned already fills
// in its current settings (app/web/courses.py `_form_of`); picking another starts from
// the defaults. Only the fields the chosen late policy uses are shown. Without this
// script every field shows and the form still works.
"use strict";
(() => {
  const form = document.querySelector("form.assign[data-assigned]");
  if (!form) return;
  const assigned = JSON.parse(form.dataset.assigned);
  const problem = form.elements.problem;
  const policy = form.elements.late_policy;
  const editing = document.getElementById("assign-editing");
  const DEFAULTS = {
    opens: "", due: "", points: "10", late_policy: "none", cutoff: "", penalty_percent: "",
    penalty_unit: "day", penalty_floor: "", rubric_mode: "added", notebook: "",
  };

  function showPolicyFields() {
    for (const label of form.querySelectorAll("label[data-policy]")) {
      label.hidden = !label.dataset.policy.split(" ").includes(policy.value);
    }
  }
  function fill() {
    const current = assigned[problem.value];
    const values = current || DEFAULTS;
    for (const [name, value] of Object.entries(DEFAULTS)) {
      const field = form.elements[name];
      if (field) field.value = values[name] ?? value;
    }
    const title = problem.options[problem.selectedIndex].textContent;
    editing.textContent = current
      ? `The current settings of ${title}: change what you need and assign it again.`
      : `${title} is not assigned yet: these are the defaults.`;
    showPolicyFields();
  }
  problem.addEventListener("change", fill);
  policy.addEventListener("change", showPolicyFields);
  showPolicyFields();
})();
