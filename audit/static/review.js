// The review page's keys and buttons (audit/templates/review.html.j2). Untrusted text is set with
// textContent only; no HTML is ever built from data. Keys: C / I / T answer, F / E first wrong step or not,
// V show the sources' verdicts (after answering), Enter or → next step, N note, A auto-advance.
"use strict";
(function () {
  const main = document.getElementById("review");
  if (!main) return;
  const reviewer = main.dataset.reviewer;
  const itemId = Number(main.dataset.itemId);
  const shownAt = performance.now();
  const note = document.getElementById("note");
  const answerPanel = document.getElementById("answer-panel");
  const afterPanel = document.getElementById("after-panel");
  const recorded = document.getElementById("recorded");
  const firstErrorQuestion = document.getElementById("first-error-question");
  const verdicts = document.getElementById("verdicts");
  const next = document.getElementById("next");
  const auto = document.getElementById("auto-advance");
  let answerId = null;
  let busy = false;

  auto.checked = localStorage.getItem("prm-audit-auto-advance") === "1";
  auto.addEventListener("change", () => localStorage.setItem("prm-audit-auto-advance", auto.checked ? "1" : "0"));

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    const data = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  function say(text) {
    recorded.textContent = text;
  }

  async function answer(value) {
    if (busy) return;
    busy = true;
    try {
      const seconds = (performance.now() - shownAt) / 1000;
      const data = await post("/api/answer", { reviewer, item_id: itemId, answer: value, note: note.value, seconds });
      answerId = data.answer_id;
      main.dataset.answered = "true";
      const p = data.progress;
      document.getElementById("progress").textContent =
        `${reviewer} · ${p.reviewer_answered} of ${p.reviewer_queue} in your queue answered · sample ${p.answered_slots} / ${p.needed_slots} reviews`;
      say(`Recorded: ${value.replace("_", " ")}.` + (data.after_reveal ? " (given after seeing the sources)" : ""));
      afterPanel.hidden = false;
      // the first step has nothing before it: its `incorrect` is the chain's first error (the server records so)
      firstErrorQuestion.hidden = value !== "incorrect" || main.dataset.stepIndex === "0";
      for (const button of answerPanel.querySelectorAll("button")) button.classList.toggle("chosen", button.dataset.answer === value);
      if (auto.checked && firstErrorQuestion.hidden) goNext();
      else next.focus();
    } catch (error) {
      say(`Not recorded: ${error.message}`);
      afterPanel.hidden = false;
    } finally {
      busy = false;
    }
  }

  async function firstError(value) {
    if (answerId === null || firstErrorQuestion.hidden) return;
    try {
      await post("/api/first-error", { reviewer, answer_id: answerId, first_error: value });
      say(value === "this" ? "Recorded: incorrect, the first wrong step." : "Recorded: incorrect, an earlier step is wrong already.");
      firstErrorQuestion.hidden = true;
      if (auto.checked) goNext();
    } catch (error) {
      say(`Not recorded: ${error.message}`);
    }
  }

  function cell(row, text, className) {
    const td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    row.appendChild(td);
  }

  async function reveal() {
    if (main.dataset.answered !== "true") return;
    try {
      const data = await post("/api/reveal", { reviewer, item_id: itemId });
      const table = document.createElement("table");
      const head = document.createElement("tr");
      for (const name of ["source", "vote", "detail"]) {
        const th = document.createElement("th");
        th.textContent = name;
        head.appendChild(th);
      }
      table.appendChild(head);
      for (const [source, vote] of Object.entries(data.votes)) {
        const row = document.createElement("tr");
        cell(row, source);
        cell(row, (vote || "no vote") + (data.first_error_of.includes(source) ? " (its first error)" : ""), `vote-${vote || "none"}`);
        const detail = data.detail[source] || {};
        const parts = Object.entries(detail).map(([key, value]) => `${key}: ${value === null ? "∅" : value}`);
        if (source === "prm") parts.push(`score ${data.prm_score}`);
        cell(row, parts.join(" · "));
        table.appendChild(row);
      }
      const outcome = document.createElement("tr");
      cell(outcome, "outcome");
      cell(outcome, data.outcome.outcome || "");
      cell(outcome, data.outcome.reason || "");
      table.appendChild(outcome);
      verdicts.replaceChildren(table);
      verdicts.hidden = false;
    } catch (error) {
      say(`Cannot show the verdicts: ${error.message}`);
    }
  }

  function goNext() {
    window.location.assign(next.getAttribute("href"));
  }

  for (const button of answerPanel.querySelectorAll("button[data-answer]")) {
    button.addEventListener("click", () => answer(button.dataset.answer));
  }
  for (const button of afterPanel.querySelectorAll("button[data-first-error]")) {
    button.addEventListener("click", () => firstError(button.dataset.firstError));
  }
  document.getElementById("reveal").addEventListener("click", reveal);

  if (main.dataset.answered === "true") afterPanel.hidden = false;

  // the step shown from the queue is reserved by this POST (a GET reserves nothing); taken meanwhile: the next
  if (main.dataset.claim === "true") {
    post("/api/claim", { reviewer, item_id: itemId }).catch((error) => {
      if (error.message.includes("took this step")) window.location.reload();
      else say(`Not reserved: ${error.message}`);
    });
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target === note) {
      if (event.key === "Escape") note.blur();
      return;
    }
    const key = event.key.toLowerCase();
    const actions = {
      c: () => answer("correct"),
      i: () => answer("incorrect"),
      t: () => answer("cant_tell"),
      f: () => firstError("this"),
      e: () => firstError("earlier"),
      v: () => reveal(),
      n: () => note.focus(),
      a: () => { auto.checked = !auto.checked; auto.dispatchEvent(new Event("change")); },
      enter: () => { if (main.dataset.answered === "true") goNext(); },
      arrowright: () => { if (main.dataset.answered === "true") goNext(); },
    };
    if (actions[key]) {
      event.preventDefault();
      actions[key]();
    }
  });

  const marked = document.getElementById("under-review");
  if (marked) marked.scrollIntoView({ block: "center" });
  main.dataset.ready = "true"; // the keys above now answer: a key pressed before this is lost
})();
