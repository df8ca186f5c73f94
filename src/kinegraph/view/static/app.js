// kinegraph view: the samples of one or more runs, filtered by question, status and disagreement.
"use strict";
let DATA = null;
let PICKED = null;

// Numbers for display: 3 decimals (3 significant digits below 0.01); the files keep full precision.
function rounded(value) {
  if (typeof value !== "number" || Number.isInteger(value)) return value;
  return Math.abs(value) < 0.01 ? Number(value.toPrecision(3)) : Math.round(value * 1000) / 1000;
}
function pretty(value) { return JSON.stringify(value, (k, v) => rounded(v), 2); }
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const child of children) node.append(child === null || child === undefined ? "" : child);
  return node;
}
function verdict(record, truth) {
  if (!record) return ["missing", "failed"];
  if (record.status !== "ok") return [record.status, "failed"];
  if (record.answer === null) return ["no answer", "failed"];
  return [record.answer, truth !== null && record.answer === truth ? "ok" : "wrong"];
}
function statuses(sample) {
  return sample.runs.map((r) => (r ? (r.status === "ok" && r.answer === null ? "unparsed" : r.status) : "missing"));
}

function fillFilters() {
  const questions = [...new Set(DATA.samples.map((s) => s.question))].sort();
  const status = [...new Set(DATA.samples.flatMap(statuses))].sort();
  for (const q of questions) document.getElementById("question").append(el("option", { value: q }, q));
  for (const s of status) document.getElementById("status").append(el("option", { value: s }, s));
  document.getElementById("runs").textContent = DATA.runs.map((r) => `${r.name} (${r.graph})`).join(" · ");
  const head = el("tr", {}, el("th", {}, "sample"), el("th", {}, "question"), el("th", {}, "truth"));
  for (const run of DATA.runs) head.append(el("th", {}, run.name));
  document.getElementById("list-head").append(head);
}

function shown() {
  const question = document.getElementById("question").value;
  const status = document.getElementById("status").value;
  const disagree = document.getElementById("disagree").checked;
  return DATA.samples.filter(
    (s) => (!question || s.question === question) && (!status || statuses(s).includes(status)) &&
      (!disagree || s.disagree));
}

function drawList() {
  const body = document.getElementById("list-body");
  body.replaceChildren();
  const samples = shown();
  for (const sample of samples) {
    const row = el("tr", { "data-sample": sample.id }, el("td", {}, sample.id), el("td", {}, sample.question),
      el("td", {}, sample.truth));
    sample.runs.forEach((record) => {
      const [text, kind] = verdict(record, sample.truth);
      row.append(el("td", { class: kind }, text));
    });
    if (sample.id === PICKED) row.classList.add("picked");
    row.addEventListener("click", () => pick(sample.id));
    body.append(row);
  }
  document.getElementById("count").textContent = `${samples.length} of ${DATA.samples.length} samples`;
}

function drawRun(sample, record, index) {
  const run = DATA.runs[index];
  const box = el("div", { class: "run", "data-run": String(index) }, el("h2", {}, run.name));
  if (!record) { box.append(el("p", { class: "failed" }, "this run has no prediction for the sample")); return box; }
  const [text, kind] = verdict(record, sample.truth);
  box.append(el("dl", { class: "meta" },
    el("dt", {}, "graph"), el("dd", {}, run.graph), el("dt", {}, "model"), el("dd", {}, run.model || "none"),
    el("dt", {}, "status"), el("dd", { class: "status" }, el("span", { class: "badge" }, record.status)),
    el("dt", {}, "parsed answer"), el("dd", { class: `answer ${kind}` }, text),
    el("dt", {}, "truth"), el("dd", {}, sample.truth)));
  if (record.error) box.append(el("h3", {}, "error"), el("pre", { class: "error" }, record.error));
  const frames = record.frames;
  box.append(el("h3", {}, `frames used (${frames.indices.length})`));
  const strip = el("div", { class: "frames" });
  frames.indices.forEach((frameIndex, k) => {
    const time = frames.timestamps_s[k];
    const src = `/frame?run=${index}&sample=${encodeURIComponent(sample.id)}&k=${k}`;
    strip.append(el("figure", {}, el("img", { src, alt: `frame ${frameIndex}`, loading: "lazy" }),
      el("figcaption", {}, `#${frameIndex}` + (time === undefined ? "" : ` · ${rounded(time)} s`))));
  });
  if (!frames.indices.length) strip.append(el("span", { class: "hint" }, "none recorded"));
  box.append(strip);
  record.prompts.forEach((prompt, k) =>
    box.append(el("h3", {}, record.prompts.length > 1 ? `prompt ${k + 1}` : "prompt"),
      el("pre", { class: "prompt" }, prompt)));
  box.append(el("h3", {}, "tool outputs (trace)"), el("pre", { class: "trace" }, pretty(record.trace)));
  box.append(el("h3", {}, "raw answer"), el("pre", { class: "raw" }, record.raw === null ? "(none)" : record.raw));
  if (record.warnings.length) box.append(el("h3", {}, "warnings"), el("pre", {}, record.warnings.join("\n")));
  return box;
}

function pick(id) {
  PICKED = id;
  const sample = DATA.samples.find((s) => s.id === id);
  const detail = document.getElementById("detail");
  detail.replaceChildren(el("h2", { id: "picked" }, sample.id),
    el("p", {}, `question ${sample.question} · truth ${sample.truth}` + (sample.disagree ? " · runs disagree" : "")));
  const runs = el("div", { class: "runs" });
  sample.runs.forEach((record, index) => runs.append(drawRun(sample, record, index)));
  detail.append(runs);
  drawList();
}

async function main() {
  DATA = await (await fetch("/api/samples")).json();
  fillFilters();
  for (const id of ["question", "status", "disagree"]) document.getElementById(id).addEventListener("change", drawList);
  drawList();
  document.body.dataset.ready = "yes";
}
main();
