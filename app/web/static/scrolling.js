// A table or code block wider than the screen scrolls inside its own box (style.css):
// such a box becomes focusable, so the keyboard can scroll it too (WCAG 2.1.1).
(() => {
  const mark = () => {
    for (const box of document.querySelectorAll("main table, main pre")) {
      const scrolls = box.scrollWidth > box.clientWidth + 1;
      if (scrolls && !box.hasAttribute("tabindex")) {
        box.tabIndex = 0;
        box.dataset.scrolls = "";
      } else if (!scrolls && box.dataset.scrolls !== undefined) {
        box.removeAttribute("tabindex");
        delete box.dataset.scrolls;
      }
    }
  };
  document.addEventListener("DOMContentLoaded", mark);
  window.addEventListener("resize", mark);
  new MutationObserver(mark).observe(document.documentElement, { childList: true, subtree: true });
})();
