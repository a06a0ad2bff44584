"use strict";
// The browser client and latency instrument (docs/protocol.md). It talks only to the server that served it
// (same origin; wss:// when the page is https) and shows every server string as text, never as markup:
// the server's Content-Security-Policy enforces both (connect-src 'self', no inline script).

const $ = (id) => document.getElementById(id);
const VOICED_RMS = 0.02;          // a microphone frame louder than this counts as voice (page mouth-to-ear)
const CLOSE_WORDS = {
  1000: "the session ended normally",
  1001: "the server is shutting down, or the session timed out",
  1002: "protocol violation",
  1006: "the connection was lost (no close frame): is the server running?",
  1007: "a message was not valid UTF-8",
  1008: "a token is required, or the token is wrong",
  1009: "a message was too large",
  1011: "the server had an internal error, or this page stopped reading",
  1013: "the server is busy or still loading its models; try again shortly",
};

let ws = null, ctx = null, stream = null, micNode = null, micSource = null, analyser = null, outGain = null;
let outRate = 22050, audioTurn = null, playAt = 0, playing = [];
let state = "idle", lastVoicedMs = null, talkHeld = false, audioEnded = new Set();
const turns = new Map();          // turn id -> what the page knows about it
const exported = [];              // every turn report, with the page's own measurement

function ownSocketUrl() {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/";
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function num(v) {
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
}

function setState(name, label) {
  state = name;
  const s = $("status");
  s.className = "state " + name;
  s.textContent = label || { hearing: "hearing you" }[name] || name;
}

// ------------------------------------------------------------------------------------------- conversation
function turnOf(id) {
  const key = String(id);
  if (!turns.has(key)) {
    const box = el("div", undefined, "turn");
    const you = el("p", "you: …", "you");
    const bot = el("p", undefined, "bot");
    const wf = el("div", undefined, "wf");
    const sum = el("div", undefined, "wf-sum");
    box.append(you, bot, wf, sum);
    $("conversation").append(box);
    turns.set(key, { id: key, box, you, bot, wf, sum, lastVoicedMs: null, endedMs: null, firstPlayMs: null,
                     pageMs: null, report: null, interrupted: false, live: null, chunks: [], audioS: 0,
                     playedMs: null });
  }
  return turns.get(key);
}

function scrollDown() {
  const last = $("conversation").lastElementChild;
  if (last && last.scrollIntoView) last.scrollIntoView({ block: "end" });
}

function note(cls, text) {
  $("conversation").append(el("p", text, cls));
  scrollDown();
}

// ------------------------------------------------------------------------------------------- waterfall
function bar(wf, scaleMs, name, startMs, ms, cls, label, targetMs) {
  const row = el("div", undefined, "wf-row");
  row.dataset.stage = name;
  row.dataset.ms = String(ms);
  const track = el("div", undefined, "wf-track");
  const b = el("div", undefined, "wf-bar " + (cls || ""));
  const left = Math.min(100, (100 * startMs) / scaleMs);
  const width = Math.max(0, Math.min(100 - left, (100 * ms) / scaleMs));
  b.style.left = left + "%";
  b.style.width = width + "%";
  if (startMs + ms > scaleMs) b.classList.add("clipped");
  track.append(b);
  if (targetMs) {  // the target line runs through every row
    const line = el("div", undefined, "wf-target");
    line.style.left = Math.min(100, (100 * targetMs) / scaleMs) + "%";
    track.append(line);
  }
  row.append(el("span", name, "wf-name"), track, el("span", label === undefined ? Math.round(ms) + " ms" : label, "wf-ms"));
  wf.append(row);
  return row;
}

function target(wf, scaleMs, targetMs) {
  // The target line spans the tracks only: it sits in an overlay with the same grid as a row.
  const row = el("div", undefined, "wf-row wf-overlay");
  const track = el("div", undefined, "wf-track");
  const line = el("div", undefined, "wf-target");
  line.style.left = Math.min(100, (100 * targetMs) / scaleMs) + "%";
  line.title = `target ${targetMs} ms`;
  track.append(line);
  row.append(el("span", `target ${targetMs} ms`, "wf-name"), track, el("span", "", "wf-ms"));
  wf.append(row);
}

function drawWaterfall(t) {
  const r = t.report;
  t.wf.replaceChildren();
  const stages = Object.entries(r.stages_ms || {}).map(([k, v]) => [k, num(v)]);
  const offsets = r.stage_offsets_ms || {};
  const targetMs = num(r.target_ms) || 500;
  const total = num(r.total_ms);
  const llmStart = offsets.llm_ttft !== undefined ? num(offsets.llm_ttft) : null;
  const scaleMs = Math.max(targetMs * 1.25, total * 1.1, num(t.pageMs) * 1.1, 1);
  const over = new Set(Array.isArray(r.over_budget) ? r.over_budget.map(String) : []);
  let at = 0;
  for (const [name, ms] of stages) {
    const start = offsets[name] !== undefined ? num(offsets[name]) : at;
    const budget = r.stage_budgets_ms ? r.stage_budgets_ms[name] : undefined;
    const row = bar(t.wf, scaleMs, name, start, ms, over.has(name) ? "over stage" : "stage", undefined, targetMs);
    row.classList.add("wf-stage");
    if (budget !== undefined) row.title = `${name}: ${ms} ms of a ${num(budget)} ms budget`;
    at = start + ms;
  }
  if (r.llm && llmStart !== null) {
    bar(t.wf, scaleMs, "llm generating", llmStart, num(r.llm.e2e_ms), "parallel", undefined, targetMs);
  }
  if (total > 0 && num(r.reply_audio_ms) > 0) {
    bar(t.wf, scaleMs, "playback", total, num(r.reply_audio_ms), "parallel", undefined, targetMs);
  }
  if (t.pageMs !== null) {
    bar(t.wf, scaleMs, "page mouth-to-ear", 0, t.pageMs, "page", undefined, targetMs).classList.add("wf-page");
  }
  target(t.wf, scaleMs, targetMs);
  const parts = [`turn ${r.turn_id}: ${r.outcome}`];
  parts.push(r.total_ms == null ? "server sum n/a" : `server sum ${Math.round(total)} ms`);
  parts.push(t.pageMs === null ? "page mouth-to-ear n/a" : `page mouth-to-ear ${Math.round(t.pageMs)} ms`);
  parts.push(`target ${targetMs} ms`);
  t.sum.textContent = parts.join(" · ");
  if (r.speculative === true) {
    t.sum.append(el("span", ` (speculative: started ${Math.round(num(r.speculation_lead_ms))} ms before the endpoint)`, "faint"));
  }
  if (num(r.speculations_discarded) > 0) {
    t.sum.append(el("span", ` (${num(r.speculations_discarded)} speculative repl${num(r.speculations_discarded) === 1 ? "y" : "ies"} discarded)`, "faint"));
  }
}

function drawLive() {
  for (const t of turns.values()) {
    if (!t.live) continue;
    const now = performance.now();
    const from = t.lastVoicedMs !== null ? t.lastVoicedMs : t.endedMs;
    const ms = (t.firstPlayMs !== null ? t.firstPlayMs : now) - from;
    t.wf.replaceChildren();
    const scaleMs = Math.max(625, ms * 1.1);
    bar(t.wf, scaleMs, "waiting (page)", 0, ms, "live", undefined, 500);
    target(t.wf, scaleMs, 500);
    if (t.firstPlayMs !== null || t.report) t.live = false;
  }
}

// ------------------------------------------------------------------------------------------- statistics
function pct(values, q) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 1) return s[0];
  const k = ((s.length - 1) * q) / 100, lo = Math.floor(k), hi = Math.min(lo + 1, s.length - 1);
  return s[lo] + (s[hi] - s[lo]) * (k - lo);
}

function drawStats() {
  const rows = new Map();
  const add = (k, v) => { if (!rows.has(k)) rows.set(k, []); rows.get(k).push(v); };
  for (const e of exported) {
    if (e.report.cancelled || e.report.outcome !== "ok") continue;
    for (const [k, v] of Object.entries(e.report.stages_ms || {})) add(k, num(v));
    if (e.report.total_ms != null) add("server sum", num(e.report.total_ms));
    if (e.page_mouth_to_ear_ms !== null) add("page mouth-to-ear", e.page_mouth_to_ear_ms);
  }
  const body = $("stats-table").tBodies[0];
  body.replaceChildren();
  for (const [k, vs] of rows) {
    const tr = el("tr");
    tr.dataset.stage = k;
    tr.append(el("td", k), el("td", Math.round(pct(vs, 50))), el("td", Math.round(pct(vs, 95))), el("td", vs.length));
    body.append(tr);
  }
  const spark = $("sparkline");
  spark.replaceChildren();
  const pages = exported.map((e) => e.page_mouth_to_ear_ms).filter((v) => v !== null);
  const top = Math.max(500, ...pages);
  for (const v of pages.slice(-40)) {
    const s = el("span", undefined, v > 500 ? "spark over" : "spark");
    s.style.height = Math.max(2, (100 * v) / top) + "%";
    s.title = Math.round(v) + " ms";
    spark.append(s);
  }
  $("export").disabled = exported.length === 0;
}

function exportReports() {
  const blob = new Blob([JSON.stringify({ turns: exported }, null, 2)], { type: "application/json" });
  const a = el("a");
  a.href = URL.createObjectURL(blob);
  a.download = "voice-turns.json";
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// ------------------------------------------------------------------------------------------- audio
function rms(f) {
  let s = 0;
  for (let i = 0; i < f.length; i++) s += f[i] * f[i];
  return Math.sqrt(s / Math.max(1, f.length));
}

function meter(id, level) {
  $(id).style.width = Math.min(100, Math.round(Math.sqrt(level) * 140)) + "%";
}

function onMicFrame(f) {
  const level = rms(f);
  const now = performance.now();
  const muted = $("mute").checked || ($("ptt").checked && !talkHeld) || (!$("bargein").checked && playing.length > 0);
  meter("mic-level", muted ? 0 : level);
  if (!muted && level > VOICED_RMS) lastVoicedMs = now;
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  const pcm = new Int16Array(f.length);
  if (!muted) for (let i = 0; i < f.length; i++) pcm[i] = Math.max(-1, Math.min(1, f[i])) * 32767;
  ws.send(pcm.buffer);  // silence while muted: the server's clock and VAD keep running
}

// How much of turn t's reply audio had reached the ear: each chunk is scheduled at an AudioContext time, and
// the sample playing now is heard after the output latency.
function playedMs(t) {
  const heardAt = ctx.currentTime - ((ctx.outputLatency || 0) + (ctx.baseLatency || 0));
  let played = 0;
  for (const c of t.chunks) if (c.at <= heardAt) played = c.offsetS + Math.min(heardAt - c.at, c.durS);
  return Math.round(played * 10000) / 10;
}

function stopPlayback() {
  for (const s of playing) { try { s.stop(); } catch (e) { /* already stopped */ } }
  playing = []; playAt = 0;
}

function play(bytes) {
  if (!ctx || audioTurn === null) return;
  const t = turnOf(audioTurn);
  if (t.interrupted) return;
  const pcm = new Int16Array(bytes);
  if (pcm.length === 0) return;
  const buf = ctx.createBuffer(1, pcm.length, outRate);
  const ch = buf.getChannelData(0);
  for (let i = 0; i < pcm.length; i++) ch[i] = pcm[i] / 32768;
  const src = ctx.createBufferSource();
  src.buffer = buf; src.connect(outGain);
  playAt = Math.max(playAt, ctx.currentTime);
  if (t.firstPlayMs === null) {
    // The first sample leaves the speaker after the scheduling delay plus the output latency.
    const latencyS = (ctx.outputLatency || 0) + (ctx.baseLatency || 0);
    t.firstPlayMs = performance.now() + (playAt - ctx.currentTime + latencyS) * 1000;
    const from = t.lastVoicedMs !== null ? t.lastVoicedMs : null;
    t.pageMs = from === null ? null : Math.max(0, t.firstPlayMs - from);
    const msg = { type: "played", turn_id: Number(t.id) };
    if (t.pageMs !== null) msg.mouth_to_ear_ms = Math.round(t.pageMs * 10) / 10;
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
    if (t.exported) { t.exported.page_mouth_to_ear_ms = t.pageMs; drawWaterfall(t); drawStats(); }
    setTimeout(() => { if (playing.length) setState("speaking"); }, Math.max(0, t.firstPlayMs - performance.now()));
  }
  t.chunks.push({ at: playAt, offsetS: t.audioS, durS: buf.duration }); t.audioS += buf.duration;
  src.start(playAt); playAt += buf.duration;
  playing.push(src);
  const turnKey = t.id;
  src.onended = () => {
    playing = playing.filter((s) => s !== src);
    if (playing.length === 0 && audioEnded.has(turnKey) && state === "speaking") setState("listening");
  };
}

function drawPlaybackLevel() {
  if (analyser) {
    const f = new Float32Array(analyser.fftSize);
    analyser.getFloatTimeDomainData(f);
    meter("play-level", rms(f));
  }
  drawLive();
  requestAnimationFrame(drawPlaybackLevel);
}

// ------------------------------------------------------------------------------------------- events
function onEvent(ev) {
  const perTurn = ["speech_ended", "transcript", "audio_start", "reply_text", "audio_end", "interrupt", "turn_report"];
  if (perTurn.includes(ev.type) && (typeof ev.turn_id !== "number" && typeof ev.turn_id !== "string")) return;
  const t = perTurn.includes(ev.type) ? turnOf(ev.turn_id) : null;
  switch (ev.type) {
    case "ready": setState("listening"); break;
    case "speech_started": setState("hearing"); break;
    case "speech_ended":
      t.lastVoicedMs = lastVoicedMs; t.endedMs = performance.now(); t.live = true;
      setState("thinking");
      break;
    case "transcript":
      t.you.textContent = "you: " + String(ev.text);
      if (!ev.text) t.you.classList.add("faint");
      break;
    case "audio_start": audioTurn = String(ev.turn_id); outRate = num(ev.sample_rate) || 22050; break;
    case "reply_text":
      if (!t.bot.textContent) t.bot.append(el("span", "assistant:", "who"));
      const clause = el("span", String(ev.text), "clause");
      clause.dataset.startS = String(t.audioS);  // where its audio starts in the reply (it follows this event)
      t.bot.append(" ", clause);
      break;
    case "audio_end":
      audioEnded.add(t.id);
      if (playing.length === 0 && state === "speaking") setState("listening");
      break;
    case "interrupt":
      // Say how much of the reply was played, so the server keeps in the history what was heard.
      if (ctx && t.chunks.length) {
        t.playedMs = playedMs(t);
        if (ws && ws.readyState === WebSocket.OPEN) {
          ws.send(JSON.stringify({ type: "played", turn_id: Number(t.id), played_ms: t.playedMs }));
        }
      }
      // The clauses not yet started were not heard: struck through (the server drops them from the history).
      for (const c of t.bot.querySelectorAll(".clause")) {
        if (Number(c.dataset.startS) * 1000 >= (t.playedMs || 0)) c.classList.add("unheard");
      }
      stopPlayback();
      t.interrupted = true; t.box.classList.add("interrupted");
      t.bot.append(el("span", "interrupted", "mark"));
      if (state === "speaking") setState("listening");
      break;
    case "turn_report":
      t.report = ev; t.live = false;
      t.exported = { report: ev, page_mouth_to_ear_ms: t.pageMs };
      exported.push(t.exported);
      drawWaterfall(t); drawStats();
      if (state === "thinking" && playing.length === 0) setState("listening");
      break;
    case "error": note("err", `error ${String(ev.code)}: ${String(ev.message)}`); break;
    default: break;
  }
  scrollDown();
}

// ------------------------------------------------------------------------------------------- session
async function listDevices() {
  const select = $("device");
  const chosen = select.value;
  const devices = await navigator.mediaDevices.enumerateDevices();
  select.replaceChildren(el("option", "default"));
  select.firstChild.value = "";
  for (const d of devices.filter((x) => x.kind === "audioinput")) {
    const o = el("option", d.label || d.deviceId.slice(0, 8));
    o.value = d.deviceId;
    select.append(o);
  }
  select.value = chosen;
}

function connect() {
  ws = new WebSocket(ownSocketUrl());
  ws.binaryType = "arraybuffer";
  ws.onopen = () => {
    const msg = { type: "start", sample_rate: ctx.sampleRate };
    if ($("token").value) msg.token = $("token").value;
    ws.send(JSON.stringify(msg));
    $("closed").textContent = "";
    for (const id of ["stop", "reconnect", "reset"]) $(id).disabled = false;
  };
  ws.onmessage = (m) => {
    if (typeof m.data !== "string") { play(m.data); return; }
    let ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; }
    if (ev && typeof ev === "object") onEvent(ev);
  };
  ws.onclose = (e) => {
    const words = CLOSE_WORDS[e.code] || "closed";
    $("closed").textContent = `closed ${e.code}: ${words}` + (e.reason ? ` (${e.reason})` : "");
    if (ws === e.target) { ws = null; if (state !== "stopped") setState("closed"); }
  };
}

async function start() {
  $("start").disabled = true;
  const device = $("device").value;
  const audio = { channelCount: 1, echoCancellation: true };
  if (device) audio.deviceId = { exact: device };
  stream = await navigator.mediaDevices.getUserMedia({ audio });
  ctx = new AudioContext();
  await ctx.audioWorklet.addModule("/mic-worklet.js");
  micSource = ctx.createMediaStreamSource(stream);
  micNode = new AudioWorkletNode(ctx, "mic-capture", { numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1 });
  micNode.port.onmessage = (m) => onMicFrame(m.data);
  micSource.connect(micNode);
  outGain = ctx.createGain();
  analyser = ctx.createAnalyser();
  analyser.fftSize = 1024;
  outGain.connect(analyser); analyser.connect(ctx.destination);
  listDevices().catch(() => {});
  connect();
}

function stop() {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "stop" }));
  stopPlayback();
  if (micSource) micSource.disconnect();
  if (micNode) { micNode.port.onmessage = null; micNode.disconnect(); }
  if (stream) for (const track of stream.getTracks()) track.stop();   // releases the microphone
  if (ctx) ctx.close();
  stream = null; ctx = null; micNode = null; micSource = null; analyser = null; outGain = null;
  meter("mic-level", 0); meter("play-level", 0);
  setState("stopped");
  $("start").disabled = false;
  for (const id of ["stop", "reconnect", "reset"]) $(id).disabled = true;
}

function reconnect() {
  if (ws) { const old = ws; ws = null; old.close(1000, "reconnect"); }
  stopPlayback();
  connect();
}

function reset() {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "reset" }));
  stopPlayback();
  $("conversation").replaceChildren();
  turns.clear();
  note("faint", "conversation reset");
}

function setTalk(held) {
  if (talkHeld === held) return;
  talkHeld = held;
  $("talk").classList.toggle("held", held);
  if (!held && ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "end_turn" }));
}

$("start").onclick = () => start().catch((e) => { note("err", String(e)); $("start").disabled = false; });
$("stop").onclick = stop;
$("reconnect").onclick = reconnect;
$("reset").onclick = reset;
$("export").onclick = exportReports;
$("ptt").onchange = () => { $("talk").disabled = !$("ptt").checked; };
$("talk").onpointerdown = () => setTalk(true);
$("talk").onpointerup = () => setTalk(false);
$("talk").onpointerleave = () => setTalk(false);
requestAnimationFrame(drawPlaybackLevel);
