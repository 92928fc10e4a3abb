(function () {
'use strict';
var T0 = performance.now();
function json(id) { return JSON.parse(document.getElementById(id).textContent); }
var D = json('data'), P = D.projects, E = D.events, HTML = document.documentElement;
var PID = new Map(P.map(function (p, i) { return [p.id, i]; }));
/* the sessions and whole records are most of the page: parsed when a view first needs them */
var S = null, BY_PROJECT = null, RECORDS = null;
function rows() {
  if (!S) {
    S = json('sessions');
    BY_PROJECT = P.map(function () { return []; });
    S.forEach(function (s, i) { BY_PROJECT[s[0]].push(i); });
  }
  return S;
}
function record(i) { RECORDS = RECORDS || json('records'); return RECORDS[i]; }
var DAY = 864e5, MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
var KINDS = {decided: 'Decided', opened: 'Issue opened', resolved: 'Resolved', retired: 'Retired'};

/* ---- DOM: every text goes in as a text node, never as markup ---- */
function h(tag, props) {
  var el = document.createElement(tag);
  for (var key in props || {}) {
    var v = props[key];
    if (v == null || v === false) continue;
    if (key === 'class') el.className = v;
    else if (key.slice(0, 2) === 'on') el.addEventListener(key.slice(2), v);
    else el.setAttribute(key, String(v));
  }
  add(el, Array.prototype.slice.call(arguments, 2));
  return el;
}
function add(el, kids) {
  kids.forEach(function (k) {
    if (k == null || k === false) return;
    if (Array.isArray(k)) add(el, k); else el.append(k instanceof Node ? k : String(k));
  });
  return el;
}
function num(n) { return Number(n).toLocaleString('en'); }
function plural(n, one, many) { return num(n) + ' ' + (n === 1 ? one : (many || one + 's')); }
function bytes(n) {
  return n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KB' : (n / 1048576).toFixed(1) + ' MB';
}
function dayNum(s) { return Date.UTC(+s.slice(0, 4), +s.slice(5, 7) - 1, +s.slice(8, 10)); }
function dayKey(t) { return new Date(t).toISOString().slice(0, 10); }
function niceDay(s, year) {
  var d = new Date(dayNum(s));
  return d.getUTCDate() + ' ' + MONTHS[d.getUTCMonth()] + (year ? ' ' + d.getUTCFullYear() : '');
}
function ago(s) {
  if (!s) return 'never';
  var n = Math.round((dayNum(D.today) - dayNum(s.slice(0, 10))) / DAY);
  if (n <= 0) return 'today';
  if (n === 1) return 'yesterday';
  if (n < 45) return n + ' days ago';
  if (n < 548) return Math.round(n / 30.4) + ' months ago';
  return Math.round(n / 365) + ' years ago';
}

/* ---- the URL fragment is the state: #q=…, #project=ID&session=FILE, #day=…, theme=… ---- */
function params() { return new URLSearchParams(location.hash.slice(1)); }
function link(state) {
  var u = new URLSearchParams(), theme = params().get('theme');
  for (var k in state) if (state[k] != null && state[k] !== '') u.set(k, state[k]);
  if (theme) u.set('theme', theme);
  return '#' + u.toString().replace(/\+/g, '%20');
}
function applyTheme() {
  var t = params().get('theme');
  if (!t) { try { t = localStorage.getItem('keeper-hub-theme'); } catch (e) { t = null; } }
  if (t === 'dark' || t === 'light') HTML.setAttribute('data-theme', t); else HTML.removeAttribute('data-theme');
}
function toggleTheme() {
  var dark = HTML.getAttribute('data-theme') === 'dark' ||
    (!HTML.getAttribute('data-theme') && matchMedia('(prefers-color-scheme: dark)').matches);
  try { localStorage.setItem('keeper-hub-theme', dark ? 'light' : 'dark'); } catch (e) { /* private mode */ }
  var p = params(); p.delete('theme');
  history.replaceState(null, '', '#' + p.toString());
  applyTheme();
}

/* ---- markdown, safely: a small renderer that only ever creates elements and text nodes ---- */
var INLINE = new RegExp([
  /(`+)([^`][\s\S]*?)\1/.source,  /* code */
  /\*\*(?=\S)([\s\S]*?\S)\*\*/.source,  /* bold */
  /(?:^|(?<=[\s(]))\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])/.source,  /* emphasis */
  /\[([^\]\n]+)\]\(([^)\s]+)(?:\s+"[^"\n]*")?\)/.source,  /* a link, shown as text */
  /\\([!-\/:-@\[-`{-~])/.source  /* an escaped character */
].join('|'), 'g');
function inline(el, text) {
  var last = 0;
  for (var m of text.matchAll(INLINE)) {
    el.append(text.slice(last, m.index));
    if (m[1]) el.append(h('code', null, m[2]));
    else if (m[3] !== undefined) el.append(inline(h('strong'), m[3]));
    else if (m[4] !== undefined) el.append(inline(h('em'), m[4]));
    else if (m[5] !== undefined) {
      el.append(h('span', {class: 'link'}, m[5]), h('span', {class: 'url'}, ' (' + m[6] + ')'));
    }
    else el.append(m[7]);
    last = m.index + m[0].length;
  }
  el.append(text.slice(last));
  return el;
}
var DATED = /\s\((\d{4}-\d{2}-\d{2})\)\s*$/;
function markdown(text, origins) {
  var out = h('div', {class: 'md'}), lists = [], item = null, para = null, code = null, fence = '';
  function endItem() {
    if (!item) return;
    var lines = item.lines, date = lines[lines.length - 1].match(DATED);
    if (date) lines[lines.length - 1] = lines[lines.length - 1].replace(DATED, '');
    var known = origins && Object.prototype.hasOwnProperty.call(origins, lines[0]) ? origins[lines[0]] : null;
    lines.forEach(function (line, i) { if (i) item.li.append(h('br')); inline(item.li, line); });
    if (date) item.li.append(h('span', {class: 'date'}, date[1]));
    /* provenance: where the item came from (keeper why ID says all), a stale mark, a never-used mark */
    if (known && known.stale) item.li.append(h('div', {class: 'stale'}, 'may be stale: ' + known.stale));
    if (known && known.unused) item.li.append(h('div', {class: 'unused'}, 'never used: ' + known.unused));
    if (known && known.origin) item.li.append(h('div', {class: 'origin'}, known.origin + ' · keeper why ' + known.id));
    item = null;
  }
  function endBlock() {
    endItem(); lists = [];
    if (para) { out.append(inline(h('p'), para.join(' '))); para = null; }
  }
  /* Lines break at \n only (one \r before it dropped), as Keeper's own markdown reads them: a lone
     \r or U+2028 inside a saved value is text, never the start of a heading. */
  text.split('\n').forEach(function (raw) {
    raw = raw.replace(/\r$/, '').replace(/[\r\u2028\u2029\x85]/g, ' ');
    if (code) {
      if (raw.trim().indexOf(fence) === 0 && !raw.trim().slice(fence.length).trim()) code = null;
      else code.append(raw + '\n');
      return;
    }
    var f = raw.match(/^ {0,3}(`{3,}|~{3,})/);
    if (f) { endBlock(); fence = f[1]; code = h('code'); out.append(h('pre', null, code)); return; }
    if (!raw.trim()) { endBlock(); return; }
    var hd = raw.match(/^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/);
    if (hd) {
      endBlock();
      var level = hd[1].length;
      out.append(inline(h('h' + Math.min(6, level + 1), {class: 'md-h' + level}), hd[2]));
      return;
    }
    var b = raw.match(/^(\s*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/);
    if (b) {
      endItem();
      if (para) endBlock();
      var depth = Math.floor(b[1].replace(/\t/g, '  ').length / 2), ordered = /\d/.test(b[2]);
      while (lists.length && lists[lists.length - 1].depth > depth) lists.pop();
      var top = lists[lists.length - 1];
      if (!top || top.depth < depth || top.ordered !== ordered) {
        var list = h(ordered ? 'ol' : 'ul');
        var parent = top && top.depth < depth ? top.el.lastElementChild || top.el : out;
        if (top && top.depth === depth) lists.pop();
        parent.append(list);
        lists.push({el: list, depth: depth, ordered: ordered});
      }
      var li = h('li');
      lists[lists.length - 1].el.append(li);
      item = {li: li, lines: [b[3]]};
      return;
    }
    if (item && /^\s/.test(raw)) { item.lines.push(raw.trim()); return; }
    if (!para) { endBlock(); para = []; }
    para.push(raw.trim());
  });
  endBlock();
  return out;
}

/* ---- search: substring scans of one folded text, typo-tolerant through its vocabulary ---- */
var WORD = /[\p{L}\p{N}_]+/gu, WORDISH = /[\p{L}\p{N}_]/u;
/* between words, in folded (lower case, unaccented) text: faster than a Unicode property class */
var NOT_WORD = /[^a-z0-9_\u00c0-\u1fff\u2c00-\ud7ff\uf900-\uffef]+/;
function fold(w) {
  w = w.toLowerCase();
  return /[^\x00-\x7f]/.test(w) ? w.normalize('NFD').replace(/[\u0300-\u036f]/g, '') : w;
}
function words(text) { return Array.from(text.matchAll(WORD), function (m) { return fold(m[0]); }); }
var INDEX = null;
function memoryItems(text) {
  var found = [], section = '', cur = null;
  text.split(/\r?\n/).forEach(function (line) {
    var hd = line.match(/^#{2,6}\s+(.*)$/);
    if (hd) { section = hd[1].trim(); cur = null; return; }
    var b = line.match(/^[-*+]\s+(.*)$/);
    if (b) { cur = {section: section, text: b[1]}; found.push(cur); return; }
    if (cur && /^\s+\S/.test(line)) cur.text += ' ' + line.trim(); else cur = null;
  });
  return found.filter(function (i) { return !/^Last updated:/.test(i.text); });
}
function buildIndex() {
  /* one folded string of every document, their start offsets, and the set of words in it */
  if (INDEX) return INDEX;
  var t0 = performance.now(), docs = [], S = rows();
  S.forEach(function (s, i) {
    docs.push({kind: 'session', i: i, p: s[0], text: [s[3], s[4], s[5], s[6], s[8], s[1]].join(' \n ')});
  });
  P.forEach(function (p, pi) {
    docs.push({kind: 'project', p: pi, text: [p.name, p.id, p.root || ''].join(' \n ')});
    memoryItems(p.memory).forEach(function (it) {
      docs.push({kind: 'memory', p: pi, section: it.section, text: it.text});
    });
  });
  var starts = new Int32Array(docs.length), parts = [], at = 0;
  docs.forEach(function (doc, d) {
    var folded = fold(doc.text) + '\n\u0001\n';
    starts[d] = at; at += folded.length; parts.push(folded);
  });
  var all = parts.join('');
  INDEX = {docs: docs, starts: starts, all: all, vocab: Array.from(new Set(all.split(NOT_WORD)))};
  HTML.setAttribute('data-index-ms', (performance.now() - t0).toFixed(1));
  return INDEX;
}
var ROWS = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];
function distance(a, b, limit) {
  /* optimal string alignment distance, giving up past limit (words longer than 62 never come close) */
  if (b.length > 62 || a.length > 62) return limit + 1;
  var prev2 = ROWS[0], prev = ROWS[1], cur = ROWS[2], i, j;
  for (j = 0; j <= b.length; j++) prev[j] = j;
  for (i = 1; i <= a.length; i++) {
    cur[0] = i;
    var best = i, ai = a.charCodeAt(i - 1);
    for (j = 1; j <= b.length; j++) {
      var bj = b.charCodeAt(j - 1);
      var v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ai === bj ? 0 : 1));
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj && prev2[j - 2] + 1 < v) {
        v = prev2[j - 2] + 1;  /* two letters swapped */
      }
      cur[j] = v;
      if (v < best) best = v;
    }
    if (best > limit) return limit + 1;
    var spare = prev2; prev2 = prev; prev = cur; cur = spare;
  }
  return prev[b.length];
}
function variants(q) {
  /* the word itself (found anywhere in a word, so it is a prefix search too) and, for words of four
     or more letters, the store's words within one edit (two from eight letters) or whose start is;
     the first or second letter must agree, which keeps typing instant on a large vocabulary */
  var found = new Map([[q, 1]]);
  if (q.length < 4 || /^\d+$/.test(q)) return found;
  var limit = q.length >= 8 ? 2 : 1, vocab = INDEX.vocab;
  for (var k = 0; k < vocab.length; k++) {
    var t = vocab[k];
    if ((t[0] !== q[0] && t[1] !== q[1]) || t.length < q.length - limit || t.indexOf(q) >= 0) continue;
    if (t.length <= q.length + limit) {
      var d = distance(q, t, limit);
      if (d <= limit) { found.set(t, d === 1 ? 0.6 : 0.4); continue; }
    }
    if (t.length > q.length + 1 && distance(q, t.slice(0, q.length + 1), 1) <= 1) found.set(t, 0.45);
  }
  /* each variant costs a scan of the whole text: one that holds a better one is found by that scan anyway */
  var kept = [];
  Array.from(found).sort(function (a, b) { return b[1] - a[1] || a[0].length - b[0].length; }).forEach(function (v) {
    if (kept.length < 16 && !kept.some(function (k) { return v[0].indexOf(k[0]) >= 0; })) kept.push(v);
  });
  return new Map(kept);
}
function docAt(pos) {
  var s = INDEX.starts, lo = 0, hi = s.length - 1;
  while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (s[mid] <= pos) lo = mid; else hi = mid - 1; }
  return lo;
}
function search(query) {
  var idx = buildIndex(), qs = Array.from(new Set(words(query))), n = idx.docs.length;
  var total = new Float64Array(n), hits = new Uint8Array(n), used = [];
  qs.forEach(function (q) {
    var best = new Float64Array(n), via = new Array(n);  /* the variant that gave each document its score */
    variants(q).forEach(function (w, t) {
      var at = new Float32Array(n), docs = [];  /* 1 for a match at the start of a word, 0.5 inside one */
      for (var pos = idx.all.indexOf(t); pos >= 0; pos = idx.all.indexOf(t, pos + t.length)) {
        var d = docAt(pos), c = idx.all.charCodeAt(pos - 1);
        var start = !(c > 47 && c < 58 || c > 96 && c < 123 || c === 95 || c > 191 && WORDISH.test(idx.all[pos - 1]));
        if (!at[d]) docs.push(d);
        if (start) at[d] = 1; else if (!at[d]) at[d] = 0.5;
      }
      var weight = w * Math.log(1 + n / Math.max(1, docs.length));
      docs.forEach(function (d) { if (weight * at[d] > best[d]) { best[d] = weight * at[d]; via[d] = t; } });
    });
    used.push(via);
    for (var d = 0; d < n; d++) if (best[d] > 0) { total[d] += best[d]; hits[d]++; }
  });
  var need = qs.length, chosen = [];
  while (need > 0 && need >= qs.length - 1) {  /* every word, else all but one */
    for (var d = 0; d < n; d++) if (hits[d] >= need) chosen.push(d);
    if (chosen.length) break;
    need--;
  }
  chosen.sort(function (a, b) { return total[b] - total[a] || a - b; });
  var count = chosen.length;
  chosen = chosen.slice(0, 100);
  /* what to highlight: the variants the shown results matched; how the words were read: the best result's */
  var matched = new Set(), fixes = [];
  used.forEach(function (via, k) {
    chosen.forEach(function (d) { if (via[d]) matched.add(via[d]); });
    var top = chosen.length && via[chosen[0]];
    if (top && top.indexOf(qs[k]) < 0) fixes.push(qs[k] + ' → ' + top);
  });
  return {docs: chosen.map(function (d) { return idx.docs[d]; }), count: count, matched: matched, fixes: fixes,
    all: need >= qs.length};
}
function isMatch(word, matched) {
  var f = fold(word);
  for (var t of matched) if (f.indexOf(t) >= 0) return true;
  return false;
}
function marked(text, matched) {
  var frag = document.createDocumentFragment(), last = 0;
  for (var m of text.matchAll(WORD)) {
    if (!isMatch(m[0], matched)) continue;
    frag.append(text.slice(last, m.index), h('mark', null, m[0]));
    last = m.index + m[0].length;
  }
  frag.append(text.slice(last));
  return frag;
}
function around(text, matched, width) {
  if (text.length <= width) return text;
  var first = -1;
  for (var m of text.matchAll(WORD)) if (isMatch(m[0], matched)) { first = m.index; break; }
  var start = Math.max(0, Math.min(first - 60, text.length - width));
  return (start > 0 ? '…' : '') + text.slice(start, start + width) + (start + width < text.length ? '…' : '');
}

/* ---- pieces ---- */
function section(title, note, body) {
  var head = h('div', {class: 'sec-head'}, h('h2', null, title), note ? h('span', {class: 'note'}, note) : null);
  return h('section', null, head, body);
}
function tiles(items) {
  return h('div', {class: 'tiles'}, items.map(function (it) {
    return h('div', {class: 'card tile'}, h('div', {class: 'v'}, it[0]), h('div', {class: 'l'}, it[1]));
  }));
}
function heatmap(days, projectId) {
  var end = dayNum(D.today), start = end - (new Date(end).getUTCDay() + 52 * 7) * DAY;
  var counts = [], max = 3;  /* levels: quarters of the busiest day (one session is never the darkest) */
  for (var t = start; t <= end; t += DAY) {
    var n = days[dayKey(t)] || 0;
    counts.push([t, n]);
    if (n > max) max = n;
  }
  var grid = h('div', {class: 'hm-grid'}), months = h('div', {class: 'hm-months'}), lastMonth = -1;
  counts.forEach(function (c, i) {
    var key = dayKey(c[0]), n = c[1], level = Math.min(4, Math.ceil(4 * n / max));
    var title = (n ? plural(n, 'session') : 'No sessions') + ' on ' + niceDay(key, true);
    grid.append(n ? h('a', {class: 'hm-cell l' + level, href: link({day: key, project: projectId}),
      title: title, 'data-date': key, 'data-n': n}) : h('span', {class: 'hm-cell', title: title, 'data-date': key}));
    var month = new Date(c[0]).getUTCMonth();
    if (i % 7 === 0 && month !== lastMonth) {
      var label = h('span', null, MONTHS[month]);
      label.style.gridColumnStart = String(i / 7 + 1);
      if (lastMonth !== -1 || new Date(c[0]).getUTCDate() <= 7) months.append(label);
      lastMonth = month;
    }
  });
  var legend = h('div', {class: 'legend'}, 'Less', [0, 1, 2, 3, 4].map(function (l) {
    var i = h('i'); i.style.background = 'var(--h' + l + ')'; return i;
  }), 'More');
  return h('div', {class: 'card pad'},
    h('div', {class: 'hm'}, months,
      h('div', {class: 'hm-days'}, ['', 'Mon', '', 'Wed', '', 'Fri', ''].map(function (d) {
        return h('span', null, d);
      })),
      grid),
    legend);
}
function yearTotals(days) {
  var since = dayKey(dayNum(D.today) - 371 * DAY), sessions = 0, active = 0;
  for (var k in days) if (k > since && k <= D.today) { sessions += days[k]; active++; }
  return plural(sessions, 'session') + ' on ' + plural(active, 'day') + ' in the last year';
}
function spark(days) {
  var end = dayNum(D.today), weeks = [], max = 0;
  for (var w = 25; w >= 0; w--) {
    var sum = 0;
    for (var d = 0; d < 7; d++) sum += days[dayKey(end - (w * 7 + d) * DAY)] || 0;
    weeks.push(sum); max = Math.max(max, sum);
  }
  return h('div', {class: 'spark', title: 'sessions per week, last 26 weeks'}, weeks.map(function (n) {
    var bar = h('i', {class: n ? null : 'z'});
    bar.style.height = (n ? 12 + 88 * n / max : 6) + '%';
    return bar;
  }));
}
function projectCard(p) {
  var gone = p.root_exists === false;
  return h('a', {class: 'card project' + (gone ? ' gone' : ''), href: link({project: p.id}), 'data-project': p.id},
    h('div', {class: 'p-top'}, h('span', {class: 'p-name'}, p.name),
      gone ? h('span', {class: 'pill gone'}, 'folder gone') : null,
      p.open_issues ? h('span', {class: 'pill issues'}, plural(p.open_issues, 'open issue')) : null),
    h('div', {class: 'root mono', title: p.root}, h('bdi', null, p.root || 'root folder not recorded yet')),
    spark(p.days),
    h('div', {class: 'p-meta'},
      plural(p.sessions, 'session') + ' · ' + bytes(p.bytes) + ' · active ' + ago(p.last_activity)));
}
function timeline(events, showProject) {
  var step = showProject ? 40 : 12, state = {kind: '', limit: step};
  var box = h('div'), list = h('div', {class: 'timeline'}), filters = h('div', {class: 'filters'});
  var kinds = [['', 'All'], ['decided', 'Decisions'], ['opened', 'Issues'], ['resolved', 'Resolved'],
    ['retired', 'Retired']];
  kinds.forEach(function (f) {
    var button = h('button', {type: 'button', class: f[0] === state.kind ? 'on' : null, onclick: function () {
      state.kind = f[0]; state.limit = step;
      Array.prototype.forEach.call(filters.children, function (b) { b.className = b === button ? 'on' : ''; });
      draw();
    }}, f[1]);
    filters.append(button);
  });
  function draw() {
    var chosen = events.filter(function (e) { return !state.kind || e[2] === state.kind; });
    var month = '';
    list.replaceChildren();
    chosen.slice(0, state.limit).forEach(function (e) {
      var m = e[1].slice(0, 7);
      if (m !== month) {
        month = m;
        list.append(h('div', {class: 'month'}, MONTHS[+m.slice(5) - 1] + ' ' + m.slice(0, 4)));
      }
      var where = e[4] ? link({project: P[e[0]].id, session: e[4]}) : link({project: P[e[0]].id});
      list.append(h('div', {class: 'ev ' + e[2], 'data-kind': e[2]},
        h('time', null, niceDay(e[1].slice(0, 10)), e[1].length > 10 ? h('small', null, e[1].slice(11)) : null),
        h('span', {class: 'kind k-' + e[2]}, KINDS[e[2]]),
        inline(h('a', {class: 'ev-text', href: where}), e[3]),
        showProject ? h('span', {class: 'ev-proj'}, P[e[0]].name) : null));
    });
    if (!chosen.length) {
      list.append(h('div', {class: 'empty'}, 'Nothing dated yet: saves add decisions and issues here.'));
    }
    if (chosen.length > state.limit) {
      list.append(h('button', {type: 'button', class: 'more', onclick: function () { state.limit += 100; draw(); }},
        'Show more (' + num(chosen.length - state.limit) + ' older)'));
    }
  }
  draw();
  var count = h('span', {class: 'note'}, plural(events.length, 'entry', 'entries'));
  box.append(h('div', {class: 'sec-head'}, count, filters), list);
  return box;
}
function sessionFile(s) { return P[s[0]].sessions_dir + D.sep + s[1]; }
function sessionBody(s) {
  var facts = h('dl', {class: 's-facts'});
  function fact(label, value) { if (value) facts.append(h('dt', null, label), h('dd', null, value)); }
  if (s[9] < 0) {  /* the record itself shows these */
    fact('Started', s[2]); fact('Branch', s[8]); fact('First prompt', s[4]); fact('Files', s[5]);
    fact('Tool uses', s[7] == null ? '' : num(s[7]));
  }
  fact('File', sessionFile(s));
  var body = h('div', {class: 's-body'}, facts);
  if (s[9] >= 0) body.append(h('div', {class: 'record'}, markdown(record(s[9]))));
  else {
    body.append(h('p', {class: 'kv'}, 'Only the newest records are embedded whole, to keep this page quick to ' +
      'open; this one is in the file above.'));
  }
  return body;
}
function sessionItem(i, showProject) {
  var s = rows()[i];
  var det = h('details', {class: 'session', 'data-file': s[1]},
    h('summary', null, h('time', null, s[2]),
      h('span', {class: 's-title'}, s[3] || s[4] || 'No summary saved'),
      h('span', {class: 's-n'}, showProject ? P[s[0]].name : s[7] == null ? '' : plural(s[7], 'tool use'))));
  det.addEventListener('toggle', function () {  /* the body is built when first opened */
    if (det.open && !det.getAttribute('data-filled')) {
      det.setAttribute('data-filled', '1');
      det.append(sessionBody(s));
    }
  });
  return det;
}
function sessionList(indices, showProject) {
  var box = h('div', {class: 'card sessions'}), shown = 0;
  var more = h('button', {type: 'button', class: 'more', onclick: page});
  var footer = h('div', {class: 'pad'}, more);
  function page() {
    var S = rows(), upto = shown + 50;
    indices.slice(shown, upto).forEach(function (i) { box.insertBefore(sessionItem(i, showProject), footer); });
    shown = Math.min(upto, indices.length);
    more.textContent = 'Show more (' + num(indices.length - shown) + ')';
    footer.hidden = shown >= indices.length;
  }
  box.append(footer);
  if (!indices.length) box.prepend(h('div', {class: 'empty'}, 'No sessions recorded yet.'));
  page();
  return box;
}
function hooksCard(p) {
  var rows = Object.keys(p.hooks).sort().map(function (k) {
    var v = p.hooks[k];
    return h('tr', null, h('td', null, k), h('td', null, num(v.calls)), h('td', null, bytes(v.injected_bytes)));
  });
  var start = p.hooks['session-start'];
  return h('div', {class: 'card pad'}, h('h2', null, 'What Keeper injected'),
    rows.length ? [
      h('p', {class: 'kv'}, start ? 'The last session start put ' + bytes(start.last_injected) +
        ' of memory into Claude’s context.' : 'No session start recorded yet.'),
      h('table', {class: 'hooks'},
        h('tr', null, h('th', null, 'hook'), h('th', null, 'calls'), h('th', null, 'injected')), rows)
    ] : h('p', {class: 'kv'}, 'No hook has run in this project yet.'));
}
function leftOut() {
  var L = D.left_out, notes = [];
  if (L.sessions) notes.push('The ' + plural(L.sessions, 'oldest session') + ' of ' + num(L.total_sessions) +
    ' are left out of this page to keep it quick to open (they still count in the calendars; ' +
    'keeper recall searches them).');
  if (L.records) notes.push('Whole records are embedded for the newest ' + num(L.total_sessions - L.records) +
    ' sessions; the others show their summary and where their file is.');
  if (L.events) {
    notes.push('The timeline holds the newest ' + num(E.length) + ' entries; ' + num(L.events) +
      ' older ones are left out.');
  }
  return notes;
}
function footer() {
  return h('footer', null, leftOut().map(function (n) { return h('p', {class: 'left-out'}, n); }),
    h('p', null, 'Keeper ' + D.version + ' · generated ' + D.generated + ' from ' + D.store +
      ' · this page makes no network requests; run keeper hub to refresh it.'));
}

function syncLine() {
  var S = D.sync || {};
  if (!S.remote) {
    return h('p', {class: 'sub sync'}, 'Sync: not set up (keeper sync --remote URL keeps this memory on every machine).');
  }
  return h('p', {class: 'sub sync'}, 'Sync: ' + S.remote + ' · last sync ' +
    (S.last_sync ? S.last_sync.replace('T', ' ') : 'never') + ' · ' + plural(S.waiting_count || 0, 'file') +
    ' waiting to be pushed' + (S.last_error ? ' · last problem: ' + S.last_error : ''));
}

/* ---- views ---- */
function overview() {
  var all = {}, decisions = 0, issues = 0;
  P.forEach(function (p) {
    for (var k in p.days) all[k] = (all[k] || 0) + p.days[k];
    decisions += p.decisions; issues += p.open_issues;
  });
  document.title = 'Keeper · Memory Hub';
  return h('div', null,
    h('h1', null, 'Memory Hub'),
    h('p', {class: 'sub'},
      'Everything Keeper remembers, across ' + plural(P.length, 'project') + '. Generated ' + D.generated + '.'),
    tiles([[num(P.length), 'projects'], [num(D.left_out.total_sessions), 'sessions'],
      [num(decisions), 'decisions in memory'], [num(issues), 'open issues']]),
    syncLine(),
    section('Sessions over the last year', yearTotals(all), heatmap(all, null)),
    section('Projects', 'most recently active first',
      P.length ? h('div', {class: 'projects'}, P.map(projectCard)) : h('div', {class: 'card empty'},
        'No projects yet: Keeper adds one the first time it runs in a project.')),
    D.global ? section('Memory across projects', 'global/memory.md',
      h('div', {class: 'card pad'}, markdown(D.global))) : null,
    section('Timeline', 'decisions made, issues opened and resolved, decisions retired',
      h('div', {class: 'card pad'}, timeline(E, true))),
    footer());
}
function projectView(pi, day) {
  var p = P[pi], gone = p.root_exists === false, S = rows();
  var indices = BY_PROJECT[pi].filter(function (i) { return !day || S[i][2].slice(0, 10) === day; });
  document.title = p.name + ' · Keeper Memory Hub';
  return h('div', {class: 'project-view', 'data-project': p.id},
    h('a', {class: 'back', href: link({})}, '← All projects'),
    h('h1', null, p.name),
    h('p', {class: 'sub mono'},
      (p.root || 'root folder not recorded yet') + (gone ? '  (this folder no longer exists)' : '') + '  ·  ' + p.id),
    gone ? h('div', {class: 'notice gone-notice'},
      'This project’s folder is gone, so its memory can only be reached by id. To clear it (restorable for a ' +
      'while with keeper restore --project ' + p.id + '), run: ', h('code', null, p.clear_command)) : null,
    tiles([[num(p.sessions), 'sessions'], [bytes(p.bytes), 'on disk'], [ago(p.last_activity), 'last active'],
      [num(p.open_issues), 'open issues'], [num(p.decisions), 'decisions']]),
    section('Sessions over the last year', yearTotals(p.days), heatmap(p.days, p.id)),
    h('section', {class: 'cols'},
      h('div', null,
        h('div', {class: 'sec-head'}, h('h2', null, 'memory.md'),
          h('span', {class: 'note'}, p.memory_cut ? 'long: only its start is shown' : '')),
        h('div', {class: 'card pad memory'},
          p.memory ? markdown(p.memory, p.origins) : h('p', {class: 'kv'}, 'No memory.md yet: the first save writes it.')),
        p.stale && p.stale.length ? h('div', {class: 'sec-head'}, h('h2', null, 'May be stale'),
          h('span', {class: 'note'}, 'a file these rest on changed or is gone since they were saved')) : null,
        p.stale && p.stale.length ? h('div', {class: 'card pad stale-list'}, h('ul', null, p.stale.map(function (s) {
          return h('li', null, s.text, h('div', {class: 'stale'}, s.reason + ' · keeper why ' + s.id));
        }))) : null,
        p.team ? h('div', {class: 'sec-head'}, h('h2', null, 'Team notes'),
          h('span', {class: 'note'}, p.team_path + ', written by the repository\u2019s authors')) : null,
        p.team ? h('div', {class: 'card pad memory team'}, markdown(p.team)) : null),
      h('div', {class: 'side'}, h('div', {class: 'sec-head'}, h('h2', null, 'Activity')), hooksCard(p),
        h('div', {class: 'card pad narrow'}, h('h2', null, 'Timeline'),
          timeline(E.filter(function (e) { return e[0] === pi; }), false)))),
    section(day ? 'Sessions on ' + niceDay(day, true) : 'Sessions',
      day ? h('a', {href: link({project: p.id})}, 'all sessions') : plural(indices.length, 'session') +
        ' in this page' + (indices.length < p.sessions ? ' of ' + num(p.sessions) : ''),
      sessionList(indices, false)),
    footer());
}
function dayView(day) {
  var S = rows(), indices = [];
  S.forEach(function (s, i) { if (s[2].slice(0, 10) === day) indices.push(i); });
  document.title = niceDay(day, true) + ' · Keeper Memory Hub';
  return h('div', null, h('a', {class: 'back', href: link({})}, '← All projects'), h('h1', null, niceDay(day, true)),
    h('p', {class: 'sub'}, plural(indices.length, 'session')), sessionList(indices, true), footer());
}
function sessionView(pi, file) {
  var S = rows(), p = P[pi], i = BY_PROJECT[pi].find(function (k) { return S[k][1] === file; });
  document.title = file + ' · ' + p.name + ' · Keeper Memory Hub';
  var s = i == null ? null : S[i];
  return h('div', {class: 'session-view', 'data-file': file},
    h('a', {class: 'back', href: link({project: p.id})}, '← ' + p.name),
    h('h1', null, s ? s[3] || s[4] || 'Session ' + s[2] : file),
    h('p', {class: 'sub'}, s ? 'Session of ' + niceDay(s[2].slice(0, 10), true) +
      (s[2].length > 10 ? ' at ' + s[2].slice(11) : '') + ' in ' + p.name
      : 'This session is not in this page (only the newest are embedded); its file is ' +
        p.sessions_dir + D.sep + file),
    s ? h('div', {class: 'card session-card'}, sessionBody(s)) : null,
    footer());
}
function searchView(query) {
  var t0 = performance.now(), found = search(query), ms = performance.now() - t0;
  HTML.setAttribute('data-search-ms', ms.toFixed(1));
  document.title = query + ' · Keeper Memory Hub';
  var list = h('div', {class: 'card results'});
  found.docs.forEach(function (doc) {
    var p = P[doc.p], title, snip = '', meta, target;
    if (doc.kind === 'session') {
      var s = S[doc.i];
      title = s[3] || s[4] || 'Session ' + s[2];
      var fields = [s[4], s[6], s[5], s[3]].filter(function (f) { return f && f !== title; });
      snip = fields.find(function (f) { return marked(f, found.matched).querySelector('mark'); }) || fields[0] || '';
      meta = ['Session', p.name, s[2]];
      target = link({project: p.id, session: s[1]});
    } else if (doc.kind === 'memory') {
      title = doc.text.replace(DATED, ''); meta = [doc.section || 'memory.md', p.name];
      target = link({project: p.id});
    } else {
      title = p.name; snip = p.root || ''; meta = ['Project', p.id]; target = link({project: p.id});
    }
    list.append(h('a', {class: 'r r-' + doc.kind, href: target},
      h('div', {class: 'r-head'}, meta.map(function (m, i) { return h('span', {class: i ? '' : 'pill'}, m); })),
      h('div', {class: 'r-title'}, marked(title, found.matched)),
      snip ? h('div', {class: 'r-snip'}, marked(around(snip, found.matched, 240), found.matched)) : null));
  });
  if (!found.docs.length) list.append(h('div', {class: 'empty'}, 'Nothing matches. Try fewer or other words.'));
  var note = plural(found.count, 'result') + (found.count > 100 ? ', the best 100 shown' : '') +
    (found.all ? '' : ' (not every word matched)') +
    (found.fixes.length ? ' · read as: ' + found.fixes.join(', ') : '');
  return h('div', {class: 'search-view'}, h('a', {class: 'back', href: link({})}, '← All projects'),
    h('h1', null, 'Search'), h('p', {class: 'sub search-note'}, note + ' · ' + ms.toFixed(0) + ' ms'), list,
    leftOut().length ? footer() : null);
}

/* ---- the frame ---- */
var input = h('input', {type: 'search', placeholder: 'Search sessions, decisions, issues…', 'aria-label': 'Search',
  autocomplete: 'off'});
var main = h('main', {class: 'wrap'});
var timer = 0;
input.addEventListener('input', function () {
  clearTimeout(timer);
  timer = setTimeout(function () {
    var q = input.value.trim();
    history.replaceState(null, '', q ? link({q: q}) : link({}));
    route();
  }, 120);
});
document.addEventListener('keydown', function (e) {
  if (e.key === '/' && document.activeElement !== input) { e.preventDefault(); input.focus(); }
  else if (e.key === 'Escape' && document.activeElement === input) { input.value = ''; location.hash = link({}); }
});
document.body.append(
  h('header', {class: 'top'}, h('div', {class: 'wrap'},
    h('a', {class: 'brand', href: link({})},
      h('i', {class: 'dot'}), h('b', null, 'Keeper'), h('span', null, 'Memory Hub')),
    h('div', {class: 'search'}, input, h('span', {class: 'kbd'}, '/')),
    h('button', {type: 'button', class: 'theme', title: 'Light or dark', onclick: toggleTheme}, '◐'))),
  main);
function route() {
  var p = params(), q = (p.get('q') || '').trim(), id = p.get('project');
  applyTheme();
  if (document.readyState === 'loading' && (q || id || p.get('day'))) {  /* sessions not read in yet */
    document.addEventListener('DOMContentLoaded', route, {once: true});
    return;
  }
  var pi = id && PID.has(id) ? PID.get(id) : null;
  var view = q ? searchView(q) : pi != null && p.get('session') ? sessionView(pi, p.get('session'))
    : pi != null ? projectView(pi, p.get('day')) : p.get('day') ? dayView(p.get('day')) : overview();
  main.replaceChildren(view);
  if (document.activeElement !== input) input.value = q;
  window.scrollTo(0, 0);
  if (!HTML.hasAttribute('data-ready-ms')) HTML.setAttribute('data-ready-ms', performance.now().toFixed(1));
}
window.addEventListener('hashchange', route);
route();
HTML.setAttribute('data-script-ms', (performance.now() - T0).toFixed(1));
document.addEventListener('DOMContentLoaded', function () {
  if (window.requestIdleCallback) requestIdleCallback(function () { buildIndex(); });
});
})();
