// cubescale view: Cube's three coupled trees (metric | call path | system) over the server's JSON API.
// Every number comes from the server (Report.panes); this file only chooses which of the two
// values a node shows (collapsed: inclusive, expanded: exclusive), formats it and colours it.
"use strict";

const state = {
  report: null,          // /api/report
  metric: null,          // selected metric index
  cnode: null,           // selected call path index
  system: null,          // selected system element index
  metricOpen: new Set(), // expanded metrics
  call: new Map(),       // call path index -> node; the roots under key -1
  sys: new Map(),        // system element index -> node; the root under key -1
  callTotal: null, systemTotal: null,
  mode: "absolute",
  view: "tree",          // the system pane: "tree", "sequence" or the index of a Cartesian topology
  callView: "tree",      // the call pane: "tree" or "flat" (the flat region profile)
  region: null,          // selected region of the flat profile
  callFilter: null,      // the call tree shows only paths to regions whose name contains this
  peerMode: "",          // the system tree's locations in Cube's peer modes: "", "percent", "distribution"
  peers: null,           // what they refer to: { max, min_nonzero } over the selection's locations
  flat: { count: 0, children: [], open: new Set(), total: null },
  seq: new Map(),        // sequence record index -> { open, records, count, instances, shown }; root -1
  seqTotal: null,
  fetched: new Set(),    // metric values asked for ("index:expanded")
  generation: 0,         // answers of an older selection are dropped
};

// ---- server

// The token of the page's URL goes with every query: inside a notebook's iframe the browser may
// withhold the cookie that the server set.
const TOKEN = new URLSearchParams(window.location.search).get("token");

// Queries in flight, as body[data-pending] (tests and benchmarks/view.py wait for 0).
let pending = 0;

async function api(path, params) {
  const query = new URLSearchParams(params || {});
  if (TOKEN) query.set("token", TOKEN);
  document.body.dataset.pending = String(++pending);
  try {
    const response = await fetch(`api/${path}?${query}`, { credentials: "same-origin" });
    let body;
    try { body = await response.json(); } catch (e) { body = { error: `${response.status} ${response.statusText}` }; }
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  } finally {
    document.body.dataset.pending = String(--pending);
  }
}

function showError(error) {
  const box = document.getElementById("error");
  box.textContent = String(error.message || error);
  box.hidden = false;
}

function clearError() { document.getElementById("error").hidden = true; }

// ---- values: which one a node shows, as text and as Cube's colour rank

function shown(node, open) { return open && node.has_children ? node.exclusive : node.inclusive; }

// An expanded metric's values are differences (stored minus children): rounding leaves noise
// such as -4e-14 s where the true value is 0. Below this share of the metric's stored total
// (scale) a value is shown, and coloured, as 0.
const NOISE = 1e-12;

function clean(value, scale) {
  return value !== null && scale && Math.abs(value) < NOISE * Math.abs(scale) ? 0 : value;
}

function format(value, root, scale, absolute = false) {
  if (value === null || value === undefined) return "–";
  value = clean(value, scale);
  root = clean(root, scale);
  if (state.mode !== "absolute" && !absolute) {
    if (!root) return "–";
    return `${(100 * value / root).toFixed(2)} %`;
  }
  // Counts (visits, bytes, UINT64 metrics) exactly, as `cubescale info` prints them; other
  // values to 4 significant digits, their exact value in the row's title.
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  const size = Math.abs(value);
  if (size >= 1e7 || size < 1e-3) return value.toExponential(3);
  return value.toLocaleString("en-US", { maximumFractionDigits: 3 });
}

const RAMP = [[40, 60, 170], [0, 170, 220], [40, 190, 60], [240, 210, 0], [225, 30, 30]];

function colour(value, root, scale) {
  value = clean(value, scale);
  root = clean(root, scale);
  if (value === null || !root) return "rgb(235,235,235)";
  const x = Math.min(1, Math.max(0, Math.abs(value / root))) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x)), f = x - i;
  const c = RAMP[i].map((v, k) => Math.round(v + f * (RAMP[i + 1][k] - v)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// ---- generic tree rows

// ``reference`` is what percentages are of: the pane's root, or in "selection" mode the value
// the pane's selected node shows (colours always rank against the root).
function row(kind, node, open, selected, root, scale, depth, reference) {
  const div = document.createElement("div");
  div.className = "row" + (selected ? " selected" : "") + (node.match ? " match" : "");
  div.setAttribute("role", "treeitem");
  div.dataset.kind = kind;
  div.dataset.index = node.index;
  div.style.paddingLeft = `${0.4 + 1.1 * depth}em`;
  const value = shown(node, open);
  div.dataset.value = value === null ? "" : String(value);
  if (node.location !== undefined && node.location !== null) div.dataset.location = node.location;
  div.dataset.state = node.has_children ? (open ? "expanded" : "collapsed") : "leaf";
  if (node.has_children) div.setAttribute("aria-expanded", String(open));
  div.setAttribute("aria-selected", String(selected));
  const toggle = document.createElement("span");
  toggle.className = "toggle";
  toggle.textContent = node.has_children ? (open ? "▾" : "▸") : "";
  const box = document.createElement("span");
  box.className = "box";
  box.style.background = colour(value, root, scale);
  const text = document.createElement("span");
  text.className = "value";
  text.textContent = format(value, reference === undefined ? root : reference, scale);
  if (value !== null && value !== undefined) text.title = String(value);  // the exact value
  const name = document.createElement("span");
  name.className = "name";
  name.textContent = node.label;
  name.title = node.label;
  div.append(toggle, box, text, name);
  return div;
}

// Cube's peer modes (Scalasca's quick reference): a location's value in percent of the largest
// location value (peer percent), or of the span from the smallest non-zero one to the largest
// (peer distribution). They are the leaf level's: other elements show "–".
function peerValue(div, node) {
  const text = div.querySelector(".value");
  const p = state.peers;
  let percent = null;
  if (p && p.max !== null && node.location !== undefined && node.location !== null) {
    const v = shown(node, node.open);
    if (state.peerMode === "percent" && p.max !== 0) percent = 100 * v / p.max;
    if (state.peerMode === "distribution" && p.min_nonzero !== null && p.max !== p.min_nonzero) {
      percent = 100 * (v - p.min_nonzero) / (p.max - p.min_nonzero);
    }
  }
  div.dataset.peer = percent === null ? "" : String(percent);
  text.textContent = percent === null ? "–" : `${percent.toFixed(2)} %`;
}

function moreRow(depth, missing, onClick) {
  const div = document.createElement("div");
  div.className = "row more";
  div.style.paddingLeft = `${1.5 + 1.1 * depth}em`;
  div.textContent = `… ${missing.toLocaleString("en-US")} more`;
  div.addEventListener("click", onClick);
  return div;
}

function message(container, text) {
  container.replaceChildren();
  const p = document.createElement("div");
  p.className = "pane-message";
  p.textContent = text;
  container.append(p);
}

// ---- metric pane (the whole metric tree comes with /api/report)

function metricNode(m) {
  return { index: m.index, label: m.display_name, has_children: m.children.length > 0,
           inclusive: m.inclusive, exclusive: m.exclusive };
}

function metricTop(m) {
  const metrics = state.report.metrics;
  while (m.parent !== null) m = metrics[m.parent];
  return m;
}

function metricRoot(m) { return metricTop(m).inclusive; }

function renderMetrics() {
  const tree = document.getElementById("metric-tree");
  const metrics = state.report.metrics;
  const rows = [];
  const chosen = metrics[state.metric];
  const picked = chosen ? shown(metricNode(chosen), state.metricOpen.has(chosen.index)) : null;
  const walk = (m, depth) => {
    const open = state.metricOpen.has(m.index);
    // Percent of the selection only within the selected metric's tree (one unit); a metric of
    // another tree (visits against a time) shows its percent of its own root, as Cube does.
    const same = chosen && metricTop(m) === metricTop(chosen);
    const reference = state.mode === "selection" && same ? picked : metricRoot(m);
    rows.push(row("metric", metricNode(m), open, m.index === state.metric, metricRoot(m), m.inclusive, depth,
                  reference));
    if (open) m.children.forEach((c) => walk(metrics[c], depth + 1));
  };
  metrics.filter((m) => m.parent === null).forEach((m) => walk(m, 0));
  tree.replaceChildren(...rows);
}

// The metric pane's values are read lazily: opening the page reads only the selected metric
// (a 1M-location report's metrics are 0.8 GB each); the other shown metrics follow in the
// background after the first paint, one at a time.
async function ensureMetric(index, expanded) {
  const m = state.report.metrics[index];
  const key = `${index}:${expanded ? 1 : 0}`;
  if (state.fetched.has(key) || (m.inclusive !== null && (!expanded || m.exclusive !== null))) return;
  state.fetched.add(key);
  const v = await api("metric", { metric: index, expanded: expanded ? 1 : 0 });
  m.inclusive = v.inclusive;
  if (v.exclusive !== null) m.exclusive = v.exclusive;
}

function visibleMetrics() {
  const metrics = state.report.metrics, out = [];
  const walk = (m) => { out.push(m); if (state.metricOpen.has(m.index)) m.children.forEach((c) => walk(metrics[c])); };
  metrics.filter((m) => m.parent === null).forEach(walk);
  return out;
}

async function fillMetrics() {
  for (const m of visibleMetrics()) {
    await ensureMetric(m.index, state.metricOpen.has(m.index));
    renderMetrics();
  }
  document.body.dataset.metrics = "1";
}

function metricExpanded() { return state.metricOpen.has(state.metric) && state.report.metrics[state.metric].children.length > 0; }

// ---- lazy trees (call and system): nodes keyed by index, children fetched page by page

function lazyParams(kind, parent, offset, limit) {
  const p = { metric: state.metric, metric_expanded: metricExpanded() ? 1 : 0, parent, offset, limit };
  if (kind === "system") Object.assign(p, selectionParams());
  if (kind === "call" && state.callFilter) p.filter = state.callFilter;
  return p;
}

function store(kind, parent, page) {
  const nodes = kind === "call" ? state.call : state.sys;
  const holder = nodes.get(parent) || { index: parent, open: true };
  nodes.set(parent, holder);
  holder.count = page.count;
  if (page.offset === 0) holder.children = [];
  for (const c of page.children) {
    const old = nodes.get(c.index) || { open: false };
    const label = kind === "call" ? c.name : c.name;
    nodes.set(c.index, Object.assign(old, c, { label }));
    holder.children.push(c.index);
  }
  if (kind === "call") state.callTotal = page.total; else { state.systemTotal = page.total; state.peers = page.peers; }
}

async function loadChildren(kind, parent, offset, limit) {
  const generation = state.generation;
  const page = await api(kind === "call" ? "calltree" : "system", lazyParams(kind, parent, offset, limit || 200));
  if (generation !== state.generation) return false;
  store(kind, parent, page);
  return true;
}

// Re-fetches every open node's loaded children for the current selection (values change with it).
async function refresh(kind) {
  const nodes = kind === "call" ? state.call : state.sys;
  const open = [-1];
  const collect = (index) => {
    const node = nodes.get(index);
    if (!node || !node.children) return;
    for (const c of node.children) {
      const child = nodes.get(c);
      if (child && child.open) { open.push(c); if (child.children) collect(c); }  // open, not loaded yet: load
    }
  };
  collect(-1);
  // Hidden nodes (under a collapsed one) are forgotten: they load again when shown.
  const visible = new Set(open);
  for (const [index, node] of nodes) {
    if (!visible.has(index) && (node.children || node.open)) { node.children = null; node.open = false; }
  }
  const results = await Promise.all(open.map((p) => {
    const node = nodes.get(p);
    const loaded = node && node.children ? node.children.length : 200;
    return loadChildren(kind, p, 0, Math.max(1, Math.min(1000, loaded)));
  }));
  return results.every(Boolean);
}

function renderLazy(kind) {
  if (state.metric === null) return;
  const nodes = kind === "call" ? state.call : state.sys;
  const tree = document.getElementById(kind === "call" ? "call-tree" : "system-tree");
  const root = kind === "call" ? state.callTotal : state.systemTotal;
  const selected = kind === "call" ? state.cnode : state.system;
  const scale = state.report.metrics[state.metric].inclusive;  // the selected metric's stored total
  const chosen = nodes.get(selected);
  const reference = state.mode === "selection" && chosen && chosen.inclusive !== undefined
    ? shown(chosen, chosen.open) : root;
  const rows = [];
  const walk = (parent, depth) => {
    const holder = nodes.get(parent);
    if (!holder || !holder.children) return;
    for (const c of holder.children) {
      const node = nodes.get(c);
      const div = row(kind, node, node.open, c === selected, root, scale, depth, reference);
      if (kind === "system" && state.peerMode) peerValue(div, node);
      rows.push(div);
      if (node.open) walk(c, depth + 1);
    }
    const missing = holder.count - holder.children.length;
    if (missing > 0) {
      rows.push(moreRow(depth, missing, () => guarded(async () => {
        if (await loadChildren(kind, parent, holder.children.length, 200)) renderLazy(kind);
      })));
    }
  };
  walk(-1, 0);
  tree.replaceChildren(...rows);
}

// What conditions the system pane: the selected call path, or in the flat profile the region.
function selectionParams() {
  return state.callView === "flat"
    ? { region: state.region, region_expanded: state.flat.open.has(state.region) ? 1 : 0 }
    : { cnode: state.cnode, cnode_expanded: cnodeExpanded() ? 1 : 0 };
}

function hasSelection() { return state.callView === "flat" ? state.region !== null : state.cnode !== null; }

function cnodeExpanded() {
  const node = state.call.get(state.cnode);
  return Boolean(node && node.open && node.has_children);
}

// ---- actions

async function guarded(action) {
  try { clearError(); await action(); } catch (e) { showError(e); }
}

async function updateCallPane() {
  state.generation += 1;
  try {
    if (state.callView === "flat") {
      if (await loadFlat(Math.max(200, state.flat.children.length))) renderFlat();
    } else if (await refresh("call")) {
      renderLazy("call");
    }
  } catch (e) {
    message(document.getElementById("call-tree"), e.message);
    message(document.getElementById("system-tree"), "");
    throw e;
  }
  await updateSystemPane();
}

async function updateSystemPane() {
  if (!hasSelection()) return;
  const generation = state.generation;
  if (await refresh("system") && generation === state.generation) renderLazy("system");
  await Promise.all([showDistribution(generation), showTopology(generation), showSequence(generation)]);
}

// ---- flat profile: per region over all its call paths (collapsed: inclusive, expanded: exclusive)

async function loadFlat(limit) {
  const generation = state.generation;
  const page = await api("flat", { metric: state.metric, metric_expanded: metricExpanded() ? 1 : 0, offset: 0,
                                   limit: Math.min(1000, limit) });
  if (generation !== state.generation) return false;
  Object.assign(state.flat, { count: page.count, children: page.children, total: page.total });
  if (state.region === null && page.children.length) firstRegion(page.children);
  return true;
}

// The flat profile's first selection: the region of the selected call path, collapsed or
// expanded as that call path is (its values are then the call path's for a region of one
// call path: known already, no location row read); else the largest region.
function firstRegion(children) {
  const node = state.call.get(state.cnode);
  const same = node && children.find((r) => r.index === node.region);
  state.region = same ? same.index : children[0].index;
  if (same && cnodeExpanded()) state.flat.open.add(same.index);
}

function renderFlat() {
  const tree = document.getElementById("flat-tree");
  const root = state.flat.total;
  const scale = state.report.metrics[state.metric].inclusive;
  const chosen = state.flat.children.find((r) => r.index === state.region);
  const reference = state.mode === "selection" && chosen ? shown(chosen, state.flat.open.has(chosen.index)) : root;
  const rows = state.flat.children.map((r) => row("flat", Object.assign({}, r, {
    label: `${r.name}  ·  ${r.calls} call path${r.calls === 1 ? "" : "s"}` }),
  state.flat.open.has(r.index), r.index === state.region, root, scale, 0, reference));
  const missing = state.flat.count - state.flat.children.length;
  if (missing > 0 && state.flat.children.length < 1000) {
    rows.push(moreRow(0, missing, () => guarded(async () => {
      if (await loadFlat(state.flat.children.length + 200)) renderFlat();
    })));
  }
  tree.replaceChildren(...rows);
}

async function selectRegion(index) {
  state.region = index;
  renderFlat();
  state.generation += 1;
  const r = state.flat.children.find((x) => x.index === index);
  if (r) {
    details(document.getElementById("region-details"), `Region: ${r.name}`, [["call paths", r.calls]]);
    document.getElementById("breadcrumb").textContent = `flat profile › ${r.name}`;
  }
  await updateSystemPane();
}

async function toggleRegion(index) {
  if (state.flat.open.has(index)) state.flat.open.delete(index); else state.flat.open.add(index);
  renderFlat();
  if (index === state.region) {
    state.generation += 1;
    await updateSystemPane();
  }
}

async function setCallView(view) {
  state.callView = view;
  document.getElementById("call-tree").hidden = view !== "tree";
  document.getElementById("flat-tree").hidden = view !== "flat";
  document.getElementById("search").hidden = view !== "tree";
  await updateCallPane();
  if (view === "tree" && state.cnode !== null) await showRegionDetails(state.cnode);  // its breadcrumb again
}

// ---- the machine in sequence form: folded records (node ×8192 › process ×32 …), each with
// min / mean / max over its instances; a record opens into its sub-records and its instances.

async function showSequence(generation) {
  if (state.view !== "sequence" || !hasSelection()) return;
  const base = Object.assign({ metric: state.metric, metric_expanded: metricExpanded() ? 1 : 0 }, selectionParams());
  if (!state.seq.has(-1)) state.seq.set(-1, { open: true, shown: 0 });
  const open = [...state.seq.entries()].filter(([, n]) => n.open).map(([r]) => r);
  const answers = await Promise.all(open.map(async (r) => {
    const node = state.seq.get(r);
    const records = await api("sequence", Object.assign({ parent: r }, base));
    const instances = r < 0 ? null
      : await api("instances", Object.assign({ record: r, offset: 0, limit: node.shown || 50 }, base));
    return [r, records, instances];
  }));
  if (generation !== state.generation) return;
  for (const [r, records, instances] of answers) {
    Object.assign(state.seq.get(r), { records: records.records, instances });
    if (r < 0) state.seqTotal = records.total;
  }
  renderSequence();
}

function renderSequence() {
  const total = state.seqTotal;
  const scale = state.report.metrics[state.metric].inclusive;
  const rows = [];
  const walk = (parent, depth) => {
    const holder = state.seq.get(parent);
    if (!holder || !holder.records) return;
    for (const rec of holder.records) {
      const node = state.seq.get(rec.index) || { open: false, shown: 0 };
      state.seq.set(rec.index, node);
      const label = `${rec.class} ×${rec.copies.toLocaleString("en-US")}` +
        (rec.instances !== rec.copies ? ` (${rec.instances.toLocaleString("en-US")} in all)` : "");
      const div = row("record", { index: rec.index, label, has_children: true, inclusive: rec.sum, exclusive: rec.sum },
                      node.open, false, total, scale, depth, total);
      for (const key of ["min", "mean", "max"]) div.dataset[key] = rec[key] === null ? "" : String(rec[key]);
      const stats = document.createElement("span");
      stats.className = "stats";
      stats.textContent = `min ${format(rec.min, null, null, true)} · mean ${format(rec.mean, null, null, true)}` +
                          ` · max ${format(rec.max, null, null, true)}`;
      div.append(stats);
      rows.push(div);
      if (node.open) {
        walk(rec.index, depth + 1);
        const page = node.instances;
        if (page) {
          for (const e of page.children) {
            const item = row("instance", { index: e.index, label: e.name, has_children: false, inclusive: e.inclusive,
                                           location: e.location }, false, false, total, scale, depth + 1, total);
            item.classList.add("instance");
            rows.push(item);
          }
          const missing = page.count - page.children.length;
          if (missing > 0 && page.children.length < 1000) {
            rows.push(moreRow(depth + 1, missing, () => guarded(async () => {
              node.shown = Math.min(1000, page.children.length + 200);
              await showSequence(state.generation);
            })));
          }
        }
      }
    }
  };
  walk(-1, 0);
  document.getElementById("sequence").replaceChildren(...rows);
}

async function toggleRecord(index) {
  const node = state.seq.get(index);
  if (!node) return;
  node.open = !node.open;
  if (node.open) await showSequence(state.generation); else renderSequence();
}

// The selection on a Cartesian topology as a heatmap: x along the first dimension, y along
// the second, one grid per slice of the third (and further) dimensions; colours as in the trees.
async function showTopology(generation) {
  if (state.view === "tree" || state.view === "sequence" || !hasSelection()) return;
  const t = await api("topology", Object.assign({ topology: state.view, metric: state.metric,
                                                  metric_expanded: metricExpanded() ? 1 : 0 }, selectionParams()));
  if (generation !== state.generation) return;
  const nx = t.dims.length > 0 ? t.dims[0].size : 1, ny = t.dims.length > 1 ? t.dims[1].size : 1;
  const nz = Math.max(1, t.values.length / Math.max(1, nx * ny));
  const top = Math.max(0, ...t.values.filter((v) => v !== null).map(Math.abs));
  const cell = Math.max(2, Math.min(24, Math.floor(280 / Math.max(nx, ny))));
  const caption = document.createElement("div");
  caption.className = "caption";
  caption.textContent = `${t.name}: ${t.dims.map((d) => `${d.name || "dim"} ${d.size}`).join(" × ")}` +
                        (nz > 1 ? ` (${nz} slices)` : "") + `; red = ${format(top, null, null, true)}`;
  const slices = [];
  for (let z = 0; z < nz; z++) {
    const canvas = document.createElement("canvas");
    canvas.width = nx * cell; canvas.height = ny * cell;
    canvas.dataset.slice = z;
    const g = canvas.getContext("2d");
    for (let x = 0; x < nx; x++) {
      for (let y = 0; y < ny; y++) {
        const v = t.values[(x * ny + y) * nz + z];
        g.fillStyle = v === null ? "rgb(245,245,245)" : colour(v, top, null);
        g.fillRect(x * cell, y * cell, cell, cell);
      }
    }
    canvas.addEventListener("mousemove", (event) => {
      const x = Math.floor(event.offsetX / cell), y = Math.floor(event.offsetY / cell);
      if (x < 0 || x >= nx || y < 0 || y >= ny) return;
      const v = t.values[(x * ny + y) * nz + z];
      readout.dataset.cell = String((x * ny + y) * nz + z);
      readout.dataset.value = v === null ? "" : String(v);
      const at = nz > 1 ? `(${x}, ${y}, ${z})` : `(${x}, ${y})`;
      readout.textContent = `${at}: ${v === null ? "no location" : format(v, state.systemTotal, null, true)}`;
    });
    slices.push(canvas);
  }
  // The value under the pointer (Cube shows it in a tooltip): the cell's coordinates and value.
  const readout = document.createElement("div");
  readout.className = "readout";
  readout.textContent = "point at a cell for its value";
  const box = document.getElementById("topology");
  box.dataset.cells = t.values.length;
  box.replaceChildren(caption, readout, ...slices);
}

function setSystemView(view) {
  state.view = view;
  document.getElementById("system-tree").hidden = view !== "tree";
  document.getElementById("sequence").hidden = view !== "sequence";
  document.getElementById("topology").hidden = view === "tree" || view === "sequence";
  return Promise.all([showTopology(state.generation), showSequence(state.generation)]);
}

// The selection over all locations, or all processes (each its locations combined):
// min / mean / max and a histogram (Cube's distribution view).
async function showDistribution(generation) {
  const over = document.getElementById("distribution-over").value;
  const box = document.getElementById("distribution");
  let d;
  try {
    d = await api("distribution", Object.assign({ metric: state.metric, metric_expanded: metricExpanded() ? 1 : 0,
                                                  bins: 40, over }, selectionParams()));
  } catch (e) {
    // never the previous selection's numbers under the new selection
    if (generation === state.generation) {
      for (const key of ["over", "min", "mean", "max"]) delete box.dataset[key];
      message(box, `no distribution: ${e.message}`);
    }
    throw e;
  }
  if (generation !== state.generation) return;
  const scale = null;  // raw values: a location's tiny share is no rounding noise
  const at = (w) => (w && w.name ? ` (${w.parent ? w.parent + " › " : ""}${w.name})` : w ? ` (location ${w.location})` : "");
  box.dataset.over = d.over;
  details(box, `Distribution over ${d.count.toLocaleString("en-US")} ${over === "processes" ? "processes" : "locations"}`, [
    ["min", d.min === null ? "–" : format(d.min, null, scale, true) + at(d.min_at)],
    ["mean", d.mean === null ? "–" : format(d.mean, null, scale, true)],
    ["max", d.max === null ? "–" : format(d.max, null, scale, true) + at(d.max_at)]]);
  for (const key of ["min", "mean", "max"]) box.dataset[key] = d[key] === null ? "" : String(d[key]);
  const canvas = document.createElement("canvas");
  canvas.width = 320; canvas.height = 70;
  canvas.title = "locations per value bin, from min (left) to max (right)";
  const g = canvas.getContext("2d");
  const top = Math.max(1, ...d.counts);
  const w = canvas.width / Math.max(1, d.counts.length);
  g.fillStyle = "rgb(43,85,192)";
  d.counts.forEach((c, i) => {
    const h = (canvas.height - 2) * c / top;
    g.fillRect(i * w + 0.5, canvas.height - h, Math.max(1, w - 1), h);
  });
  const axis = document.createElement("div");
  axis.className = "axis";
  const left = document.createElement("span"), right = document.createElement("span");
  left.textContent = format(d.min, null, scale, true);
  right.textContent = `${format(d.max, null, scale, true)} · highest bin ${top.toLocaleString("en-US")} ${over}`;
  axis.append(left, right);
  box.append(canvas, axis);
}

function setUnits() {
  const unit = state.report.metrics[state.metric].unit;
  document.getElementById("call-unit").textContent = unit ? `(${unit})` : "";
  document.getElementById("system-unit").textContent = unit ? `(${unit})` : "";
}

async function selectMetric(index) {
  state.metric = index;
  await ensureMetric(index, state.metricOpen.has(index));
  renderMetrics();
  setUnits();
  showMetricDetails();
  await updateCallPane();
}

async function toggleMetric(index) {
  if (state.metricOpen.has(index)) state.metricOpen.delete(index); else state.metricOpen.add(index);
  if (state.metricOpen.has(index)) await ensureMetric(index, true);
  renderMetrics();
  if (state.metricOpen.has(index)) guarded(fillMetrics);  // its children's values, in the background
  if (index === state.metric) await updateCallPane();
}

async function selectCnode(index) {
  state.cnode = index;
  renderLazy("call");
  state.generation += 1;
  await Promise.all([showRegionDetails(index), updateSystemPane()]);
}

async function toggleLazy(kind, index) {
  const nodes = kind === "call" ? state.call : state.sys;
  const node = nodes.get(index);
  node.open = !node.open;
  if (node.open && !node.children) await loadChildren(kind, index, 0, 200);
  renderLazy(kind);
  if (kind === "call" && index === state.cnode) {
    state.generation += 1;
    await updateSystemPane();
  }
}

function selectSystem(index) {
  state.system = index;
  renderLazy("system");
}

// ---- details and breadcrumb

function details(container, title, entries) {
  const h = document.createElement("h3");
  h.textContent = title;
  const dl = document.createElement("dl");
  for (const [key, value] of entries) {
    if (value === "" || value === null || value === undefined) continue;
    const dt = document.createElement("dt");
    dt.textContent = key;
    const dd = document.createElement("dd");
    if (key === "URL" && /^https?:\/\//.test(value)) {
      const a = document.createElement("a");
      a.href = value; a.textContent = value; a.rel = "noreferrer noopener"; a.target = "_blank";
      dd.append(a);
    } else {
      dd.textContent = String(value);
    }
    dl.append(dt, dd);
  }
  container.replaceChildren(h, dl);
}

// Score-P and Scalasca write documentation links as "@mirror@file.html#anchor": as Cube does,
// the report's mirrors take its place, the first web (http/https) one (a file:// mirror names the
// measuring machine's installation); without one, the first mirror's link, shown as text.
function documentUrl(url) {
  if (!url || !url.startsWith("@mirror@")) return url;
  const links = (state.report.mirrors || []).map((m) => m + url.slice("@mirror@".length));
  return links.find((u) => /^https?:\/\//.test(u)) || links[0] || url;
}

function showMetricDetails() {
  const m = state.report.metrics[state.metric];
  details(document.getElementById("metric-details"), `Metric: ${m.display_name}`, [
    ["unique name", m.name], ["unit", m.unit], ["data type", m.dtype], ["kind", m.kind],
    ["description", m.description], ["URL", documentUrl(m.url)], ["expression", m.expression]]);
}

async function showRegionDetails(index) {
  const generation = state.generation;
  const d = await api("cnode", { cnode: index });
  if (generation !== state.generation && state.cnode !== index) return;
  const r = d.region;
  const lines = r.begin < 0 ? "" : r.end > r.begin ? `${r.begin}–${r.end}` : String(r.begin);
  const parameters = d.parameters.map((p) => `${p.parkey || p.partype || "?"}=${p.parvalue || ""}`).join(", ");
  details(document.getElementById("region-details"), `Region: ${r.name}`, [
    ["file", r.module], ["lines", lines], ["paradigm", r.paradigm], ["role", r.role],
    ["mangled name", r.mangled_name !== r.name ? r.mangled_name : ""], ["description", r.description],
    ["URL", documentUrl(r.url)], ["parameters", parameters], ["call path id", d.id]]);
  const nav = document.getElementById("breadcrumb");
  const parts = [];
  d.path.forEach((p, i) => {
    if (i) { const s = document.createElement("span"); s.className = "sep"; s.textContent = "›"; parts.push(s); }
    const a = document.createElement("a");
    a.textContent = p.name;
    a.dataset.index = p.index;
    a.addEventListener("click", () => guarded(() => selectCnode(p.index)));
    parts.push(a);
  });
  nav.replaceChildren(...parts);
}

// ---- search: call paths by region name; a hit opens the tree down to it and selects it

async function search(text) {
  const box = document.getElementById("search-results");
  if (!text) { box.hidden = true; return; }
  const found = await api("search", { q: text, limit: 50 });
  const rows = [];
  const count = document.createElement("div");
  count.className = "count";
  count.textContent = `${found.count.toLocaleString("en-US")} call paths match` +
                      (found.count > found.matches.length ? ` (first ${found.matches.length})` : "");
  rows.push(count);
  if (found.count > 0) {
    const filter = document.createElement("div");
    filter.className = "hit filter-action";
    filter.textContent = `show only these in the call tree (filter by “${text}”)`;
    filter.addEventListener("click", () => guarded(() => applyFilter(text)));
    rows.push(filter);
  }
  for (const m of found.matches) {
    const hit = document.createElement("div");
    hit.className = "hit";
    hit.dataset.index = m.index;
    hit.textContent = m.path.map((p) => p.name).join(" › ");
    hit.addEventListener("click", () => guarded(() => reveal(m.path.map((p) => p.index))));
    rows.push(hit);
  }
  box.replaceChildren(...rows);
  box.hidden = false;
}

// The call tree filtered by region name (the server keeps each match's path from the root;
// values stay the whole tree's): the tree loads again and opens, breadth first, the call
// paths that only lead to matches, up to FILTER_OPEN of them, so that the first matches show.
const FILTER_OPEN = 25;

async function applyFilter(text) {
  state.callFilter = text || null;
  document.getElementById("search-results").hidden = true;
  const chip = document.getElementById("call-filter");
  chip.hidden = !state.callFilter;
  chip.textContent = state.callFilter ? `filter: ${state.callFilter} ✕` : "";
  state.call = new Map();
  state.generation += 1;
  if (!await loadChildren("call", -1, 0, 200)) return;
  if (state.callFilter) {
    let queue = state.call.get(-1).children.slice(), opened = 0;
    while (queue.length && opened < FILTER_OPEN) {
      const index = queue.shift();
      const node = state.call.get(index);
      if (!node || !node.has_children || node.match) continue;
      node.open = true;
      opened += 1;
      if (!await loadChildren("call", index, 0, 200)) return;
      queue = queue.concat(node.children);
    }
  }
  renderLazy("call");
  document.body.dataset.filtered = state.callFilter ? "1" : "0";
}

async function reveal(path) {
  for (let step = 0; step + 1 < path.length; step++) {
    const index = path[step];
    const node = state.call.get(index);
    if (!node) break;
    if (!node.open) {
      node.open = true;
      if (!node.children) await loadChildren("call", index, 0, 1000);
    }
    // the next step may lie beyond the pages loaded so far: load more until it is there
    while (node.children && !node.children.includes(path[step + 1]) && node.children.length < node.count) {
      if (!await loadChildren("call", index, node.children.length, 1000)) return;
    }
  }
  const target = path[path.length - 1];
  await selectCnode(target);
  const div = document.querySelector(`#call-tree .row[data-index='${target}']`);
  if (div) div.scrollIntoView({ block: "center" });
}

// ---- wiring

function onTreeClick(kind, handlers) {
  document.getElementById(`${kind}-tree`).addEventListener("click", (event) => {
    const div = event.target.closest(".row");
    if (!div || div.classList.contains("more")) return;
    const index = Number(div.dataset.index);
    const action = event.target.classList.contains("toggle") ? handlers.toggle : handlers.select;
    guarded(() => action(index));
  });
  document.getElementById(`${kind}-tree`).addEventListener("dblclick", (event) => {
    const div = event.target.closest(".row");
    if (div && !div.classList.contains("more") && !event.target.classList.contains("toggle")) {
      guarded(() => handlers.toggle(Number(div.dataset.index)));
    }
  });
}

async function start() {
  onTreeClick("metric", { select: selectMetric, toggle: toggleMetric });
  onTreeClick("call", { select: selectCnode, toggle: (i) => toggleLazy("call", i) });
  onTreeClick("system", { select: selectSystem, toggle: (i) => toggleLazy("system", i) });
  onTreeClick("flat", { select: selectRegion, toggle: toggleRegion });
  document.getElementById("sequence").addEventListener("click", (event) => {
    const div = event.target.closest(".row");
    if (div && div.dataset.kind === "record" && event.target.classList.contains("toggle")) {
      guarded(() => toggleRecord(Number(div.dataset.index)));
    }
  });
  document.getElementById("call-view").addEventListener("change", (event) => {
    guarded(() => setCallView(event.target.value));
  });
  document.getElementById("search").addEventListener("keydown", (event) => {
    if (event.key === "Enter") guarded(() => search(event.target.value.trim()));
    if (event.key === "Escape") { event.target.value = ""; document.getElementById("search-results").hidden = true; }
  });
  document.getElementById("call-filter").addEventListener("click", () => guarded(() => applyFilter(null)));
  document.getElementById("peer-mode").addEventListener("change", (event) => {
    state.peerMode = event.target.value;
    renderLazy("system");
  });
  document.getElementById("distribution-over").addEventListener("change", () => guarded(async () => {
    if (hasSelection()) await showDistribution(state.generation);
  }));
  document.getElementById("system-view").addEventListener("change", (event) => {
    guarded(() => setSystemView(event.target.value));
  });
  document.getElementById("mode").addEventListener("change", (event) => {
    state.mode = event.target.value;
    renderMetrics(); renderLazy("call"); renderLazy("system");
    if (state.callView === "flat") renderFlat();
    if (state.view === "sequence") renderSequence();
  });
  state.report = await api("report");
  document.getElementById("file").textContent = state.report.file;
  document.title = `${state.report.file} – cubescale view`;
  const views = document.getElementById("system-view");
  state.report.topologies.forEach((t, i) => {
    const option = document.createElement("option");
    option.value = String(i);
    option.textContent = `topology: ${t.name || i}`;
    views.append(option);
  });
  const roots = state.report.metrics.filter((m) => m.parent === null);
  const first = roots.find((m) => m.name === "time") || roots[0] || state.report.metrics[0];
  await selectMetric(first.index);
  const callRoots = state.call.get(-1);
  if (callRoots && callRoots.children.length) await selectCnode(callRoots.children[0]);
  document.body.dataset.ready = "1";
  await fillMetrics();  // the other metrics' values, after the first paint
}

guarded(start);
