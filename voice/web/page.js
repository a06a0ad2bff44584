"use strict";
// The page talks only to the server that served it (same origin; wss:// when the page is https). Every
// server string reaches the page as text (textContent), never as markup. The server's CSP enforces both.
const $ = (id) => document.getElementById(id);
let ws, ctx, source, node, playCtx, playAt = 0, playing = [];

function ownSocketUrl() {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/";
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function say(cls, text) {
  $("log").prepend(el("p", text, cls));
}

function report(r) {
  const t = el("table");
  const head = el("tr");
  head.append(el("th", `turn ${r.turn_id} (${r.outcome})`), el("th", "ms"));
  t.append(head);
  for (const [k, v] of Object.entries(r.stages_ms || {})) {
    const row = el("tr", undefined, (r.over_budget || []).includes(k) ? "over" : "");
    row.append(el("td", k), el("td", Number(v).toFixed(1)));
    t.append(row);
  }
  const total = el("tr");
  total.append(el("th", `total (target ${r.target_ms})`), el("th", r.total_ms == null ? "n/a" : Number(r.total_ms).toFixed(1)));
  t.append(total);
  $("log").prepend(t);
}

function stopPlayback() {
  for (const s of playing) { try { s.stop(); } catch (e) {} }
  playing = []; playAt = 0;
}

function play(bytes, rate) {
  const pcm = new Int16Array(bytes);
  const buf = playCtx.createBuffer(1, pcm.length, rate);
  const ch = buf.getChannelData(0);
  for (let i = 0; i < pcm.length; i++) ch[i] = pcm[i] / 32768;
  const src = playCtx.createBufferSource();
  src.buffer = buf; src.connect(playCtx.destination);
  playAt = Math.max(playAt, playCtx.currentTime);
  src.start(playAt); playAt += buf.duration;
  playing.push(src); src.onended = () => { playing = playing.filter((s) => s !== src); };
}

async function start() {
  $("start").disabled = true;
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true } });
  ctx = new AudioContext(); playCtx = ctx;
  let outRate = 22050;
  ws = new WebSocket(ownSocketUrl());
  ws.binaryType = "arraybuffer";
  ws.onopen = () => {
    const msg = { type: "start", sample_rate: ctx.sampleRate };
    if ($("token").value) msg.token = $("token").value;
    ws.send(JSON.stringify(msg));
    source = ctx.createMediaStreamSource(stream);
    node = ctx.createScriptProcessor(1024, 1, 1);
    node.onaudioprocess = (e) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      const f = e.inputBuffer.getChannelData(0), pcm = new Int16Array(f.length);
      for (let i = 0; i < f.length; i++) pcm[i] = Math.max(-1, Math.min(1, f[i])) * 32767;
      ws.send(pcm.buffer);
    };
    source.connect(node); node.connect(ctx.destination);
    $("status").textContent = "listening"; $("stop").disabled = false;
  };
  ws.onmessage = (m) => {
    if (typeof m.data !== "string") { play(m.data, outRate); return; }
    const ev = JSON.parse(m.data);
    if (ev.type === "audio_start") outRate = ev.sample_rate;
    else if (ev.type === "transcript") say("you", "you: " + ev.text);
    else if (ev.type === "reply_text") say("bot", "assistant: " + ev.text);
    else if (ev.type === "interrupt") stopPlayback();
    else if (ev.type === "turn_report") report(ev);
    else if (ev.type === "error") say("err", `error ${ev.code}: ${ev.message}`);
    else if (ev.type === "speech_started") $("status").textContent = "hearing you";
    else if (ev.type === "speech_ended") $("status").textContent = "thinking";
  };
  ws.onclose = (e) => { $("status").textContent = `closed (${e.code} ${e.reason})`; stop(); };
}

function stop() {
  if (node) node.disconnect();
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "stop" }));
  $("start").disabled = false; $("stop").disabled = true;
}

$("start").onclick = () => start().catch((e) => { say("err", String(e)); $("start").disabled = false; });
$("stop").onclick = stop;
