// Turns <textarea id="code"> into a CodeMirror 6 editor: Python highlighting,
// indentation, bracket matching, undo history, search. The textarea stays the
// source of truth for the page script (problem.js), so the form works the same.
import { basicSetup } from "codemirror";
import { python } from "@codemirror/lang-python";
import { indentUnit } from "@codemirror/language";
import { EditorView, keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";

function mount(textarea) {
  // The editable element is what assistive technology reads: it takes the textarea's
  // name and the hint that says how to leave it with the keyboard (Tab indents here).
  const named = { "aria-label": textarea.getAttribute("aria-label") || "Code" };
  const hint = textarea.getAttribute("aria-describedby");
  if (hint) named["aria-describedby"] = hint;
  const view = new EditorView({
    doc: textarea.value,
    extensions: [
      basicSetup,
      EditorView.contentAttributes.of(named),
      python(),
      indentUnit.of("    "),
      keymap.of([indentWithTab]),
      EditorView.lineWrapping,
      EditorView.updateListener.of((update) => {
        if (!update.docChanged) return;
        textarea.value = view.state.doc.toString();
        textarea.dispatchEvent(new Event("input"));
      }),
    ],
  });
  textarea.after(view.dom);
  textarea.hidden = true;
  // problem.js sets textarea.value (draft restore, reset): mirror it into the editor.
  textarea.addEventListener("jaxjudge:replaced", () => {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: textarea.value } });
  });
  return view;
}

window.jaxjudgeEditor = { mount };
