// The controls an app's test suite drives through /api/dev (trust mode only; README
// "Testing your app against it"): snapshots of the data, the server's clock, and faults.
// Each acts on every instance on the database.
import { h, status, field, when, table } from './dom.js';

// Runs `work`, says `done` (or the error) in `message`, then draws the list again. (A
// restore can end this very session, when it was signed in after the snapshot: the list's
// 401 then says so.)
function action(message, reload, work, done) {
  return async (event) => {
    event?.preventDefault();
    try {
      await work();
      message.replaceChildren(status(typeof done === 'function' ? done() : done));
      await reload();
    } catch (error) {
      message.replaceChildren(status(error.status === 401 ? 'Your session ended: sign in again.' : error.message, 'error'));
    }
  };
}

// A table as wide as its cells, scrolled sideways on a narrow screen (by keyboard too).
function wide(caption, headings, rows) {
  return h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption }, table(caption, headings, rows));
}

function size(bytes) {
  if (bytes >= 1 << 20) return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
  return `${Math.ceil(bytes / 1024)} KiB`;
}

export async function snapshots({ get, post, remove, show }) {
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '64', pattern: '[A-Za-z0-9_.\\-]+' });
  const message = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});
  const path = (snapshot) => `/api/dev/snapshots/${encodeURIComponent(snapshot.name)}`;
  async function load() {
    const { snapshots: saved } = await get('/api/dev/snapshots');
    list.replaceChildren(saved.length
      ? wide('Saved snapshots', ['Name', 'Saved', 'Users', 'Posts', 'Size', 'Actions'], saved.map((snapshot) => [
        snapshot.name, when(snapshot.created_at), snapshot.users, snapshot.posts, size(snapshot.bytes),
        h('span', { class: 'actions' },
          h('button', {
            type: 'button', 'aria-label': `Restore ${snapshot.name}`,
            onclick: action(message, load, () => post(`${path(snapshot)}/restore`), `Restored ${snapshot.name}.`),
          }, 'Restore'), ' ',
          h('button', {
            type: 'button', class: 'danger', 'aria-label': `Delete ${snapshot.name}`,
            onclick: action(message, load, () => remove(path(snapshot)), `Deleted ${snapshot.name}.`),
          }, 'Delete')),
      ]))
      : status('No snapshots yet.'));
  }
  show(h('h1', {}, 'Snapshots'),
    h('p', {}, 'A snapshot keeps every table, the ids to come and the stored images; restoring it puts them back ',
      'exactly, on every instance. Sessions signed in after a snapshot end when it is restored.'),
    h('form', { onsubmit: action(message, load, () => post('/api/dev/snapshots', { name: name.value.trim() }), () => `Saved ${name.value.trim()}.`) },
      field('Name', name), h('button', { type: 'submit' }, 'Save')),
    message, list);
  await load();
}

export async function clock({ get, post, put, remove, show }) {
  const at = h('input', { type: 'datetime-local', name: 'now', step: '1' });
  const frozen = h('input', { type: 'checkbox', name: 'frozen' });
  const seconds = h('input', { type: 'number', name: 'seconds', step: '1', value: '3600', required: true });
  const message = h('div', { 'aria-live': 'polite' });
  const now = h('div', {});
  async function load() {
    const { clock: state } = await get('/api/dev/clock');
    const offset = Math.round(state.offset_seconds);
    now.replaceChildren(h('p', { class: 'clock' }, `Server time: ${when(state.now)}`,
      state.frozen ? ' (frozen)' : '', offset ? `, ${offset} s from real time` : ', real time'));
  }
  const set = () => {
    const body = { frozen: frozen.checked };
    if (at.value) body.now = new Date(at.value).toISOString();
    return put('/api/dev/clock', body);
  };
  show(h('h1', {}, 'Clock'),
    h('p', {}, 'Every time the server keeps follows this clock: expiries, trending, retention, jobs coming due.'),
    now,
    h('form', { onsubmit: action(message, load, set, 'The clock is set.') },
      field('Time (yours, blank for now)', at), field('Frozen', frozen), h('button', { type: 'submit' }, 'Set the clock')),
    h('form', { onsubmit: action(message, load, () => post('/api/dev/clock/advance', { seconds: Number(seconds.value) }), 'The clock moved.') },
      field('Seconds', seconds), h('button', { type: 'submit' }, 'Advance')),
    h('form', { onsubmit: action(message, load, () => remove('/api/dev/clock'), 'Back to real time.') },
      h('button', { type: 'submit' }, 'Real time')),
    message);
  await load();
}

export async function faults({ get, post, remove, show }) {
  const method = h('select', { name: 'method' }, ['', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE']
    .map((value) => h('option', { value }, value || 'Any')));
  const path = h('input', { type: 'text', name: 'path', required: true, placeholder: '/api/posts/*/like' });
  const code = h('input', { type: 'number', name: 'status', min: '400', max: '599' });
  const latency = h('input', { type: 'number', name: 'latency_ms', min: '0' });
  const drop = h('input', { type: 'checkbox', name: 'drop' });
  const afterCommit = h('input', { type: 'checkbox', name: 'after_commit' });
  const times = h('input', { type: 'number', name: 'times', min: '1' });
  const probability = h('input', { type: 'number', name: 'probability', min: '0', max: '1', step: '0.01' });
  const seed = h('input', { type: 'number', name: 'seed', min: '0' });
  const message = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});
  const effect = (fault) => [fault.latency_ms ? `wait ${fault.latency_ms} ms` : null, fault.status ? `answer ${fault.status}` : null,
    fault.drop ? 'drop the connection' : null, fault.after_commit ? 'after the write' : null].filter(Boolean).join(', ');
  async function load() {
    const { faults: active } = await get('/api/dev/faults');
    list.replaceChildren(active.length
      ? h('div', {}, wide('Faults in force', ['Request', 'Effect', 'Times', 'Probability', 'Hits', 'Actions'], active.map((fault) => [
        `${fault.match.method || 'any'} ${fault.match.path}`, effect(fault), fault.times ?? 'always', fault.probability ?? 1, fault.hits,
        h('button', {
          type: 'button', 'aria-label': `Remove fault ${fault.id}`,
          onclick: action(message, load, () => remove(`/api/dev/faults/${encodeURIComponent(fault.id)}`), 'The fault is removed.'),
        }, 'Remove'),
      ])), h('button', { type: 'button', class: 'danger', onclick: action(message, load, () => remove('/api/dev/faults'), 'Every fault is removed.') },
        'Remove all'))
      : status('No faults: every request is served.'));
  }
  const number = (input) => (input.value === '' ? undefined : Number(input.value));
  const add = () => post('/api/dev/faults', {
    match: { method: method.value || undefined, path: path.value.trim() },
    status: number(code), latency_ms: number(latency), drop: drop.checked || undefined,
    after_commit: afterCommit.checked || undefined, times: number(times), probability: number(probability), seed: number(seed),
  });
  show(h('h1', {}, 'Faults'),
    h('p', {}, 'Requests matching a route pattern (* one segment, ** any) wait, fail, or lose their answer. ',
      '/api/dev is never touched.'),
    h('form', { onsubmit: action(message, load, add, 'The fault is in force.') },
      field('Method', method), field('Path', path), field('Status', code), field('Latency (ms)', latency),
      field('Drop the connection', drop), field('After the write', afterCommit), field('Times', times),
      field('Probability', probability), field('Seed', seed), h('button', { type: 'submit' }, 'Add the fault')),
    message, list);
  await load();
}
