// The report's figures, live: a mark's value shown as soon as the pointer (or the keyboard's focus) is on
// it, and a run hidden or shown from its legend entry. Every value is also the mark's <title>, which a
// browser shows without this script; while the script shows it, the <title> is emptied, so that the
// browser does not show it a second time.
(() => {
  "use strict";
  const tip = document.createElement("div");
  tip.className = "tip";
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  document.body.appendChild(tip);
  let held = null;

  // the element a <title> child names: a data mark of a chart (the chart's own title is the svg's)
  const markOf = (node) => {
    for (let el = node; el instanceof Element && el.tagName !== "svg"; el = el.parentNode) {
      const first = el.firstElementChild;
      if (first && first.tagName === "title") return el;
    }
    return null;
  };
  const hide = () => {
    if (held) held.title.textContent = held.text;
    held = null;
    tip.hidden = true;
  };
  const show = (mark, x, y) => {
    if (!held || held.mark !== mark) {
      hide();
      const title = mark.firstElementChild;
      held = { mark, title, text: title.textContent };
      tip.textContent = held.text;
      title.textContent = "";
    }
    tip.hidden = false;
    const box = tip.getBoundingClientRect();
    const left = Math.max(4, Math.min(x + 14, document.documentElement.clientWidth - box.width - 8));
    const top = y + 20 + box.height > window.innerHeight ? y - box.height - 10 : y + 20;
    tip.style.left = `${left + window.scrollX}px`;
    tip.style.top = `${top + window.scrollY}px`;
  };

  document.addEventListener("pointermove", (event) => {
    const mark = event.target instanceof Element && event.target.closest("svg.chart") ? markOf(event.target) : null;
    if (mark) show(mark, event.clientX, event.clientY);
    else if (held) hide();
  });
  document.addEventListener("focusin", (event) => {
    const target = event.target;
    if (!(target instanceof Element) || !target.closest("svg.chart")) return;
    const mark = markOf(target) || markOf(target.firstElementChild);
    if (!mark) return;
    const box = mark.getBoundingClientRect();
    show(mark, box.right, box.bottom);
  });
  document.addEventListener("focusout", hide);

  const toggle = (key) => {
    const on = key.getAttribute("aria-pressed") !== "false";
    key.setAttribute("aria-pressed", on ? "false" : "true");
    const chart = key.closest("svg.chart");
    for (const series of chart.querySelectorAll(`.series[data-series="${key.dataset.series}"]`)) {
      series.classList.toggle("hidden", on);
    }
  };
  document.addEventListener("click", (event) => {
    const key = event.target instanceof Element ? event.target.closest("svg.chart .key") : null;
    if (key) toggle(key);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") hide();
    const key = event.target instanceof Element ? event.target.closest("svg.chart .key") : null;
    if (key && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      toggle(key);
    }
  });
})();
